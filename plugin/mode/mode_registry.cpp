// SPDX-License-Identifier: MIT
// mode_registry.cpp - the process-wide mode slot and the table of live mode handles.
#include "plugin/mode/mode_registry.h"

#include <boost/thread/lock_guard.hpp>

#include <atomic>
#include <cstdint>
#include <optional>

#include "plugin/mode/handle_table.h"
#include "support/fork_epoch.h"
#include "support/status_error.h"

namespace hipacm {
namespace {

// The slot holds the active mode's handle value (0 = none). Constant-
// initialised: no global constructor runs when the plugin loads.
std::atomic<std::uintptr_t> g_slot{0};

// Never-reused ids (handle_table.h): an exited mode's handle can never name a newer mode, and
// one that was issued but is no longer live is known to have exited.
using Registry = HandleTable<std::shared_ptr<Mode>, HandleKind::kMode>;

// A child of fork() has none of its parent's pool threads: no mode is active there.
void empty_slot_in_child(Registry&) noexcept { g_slot.store(0, std::memory_order_release); }

// Never destroyed: a host may return from main() with a mode still active,
// and its pool threads (and exit-time destructors of futures) still use it.
Registry& registry() {
  return ForkGuarded<Registry, ForkRank::kModeRegistry, &empty_slot_in_child>::instance();
}

hipacm_mode* to_mode_handle(std::uintptr_t value) { return reinterpret_cast<hipacm_mode*>(value); }

std::uintptr_t handle_value(hipacm_mode* handle) {
  return reinterpret_cast<std::uintptr_t>(handle);
}

}  // namespace

hipacm_mode* claim_slot(std::shared_ptr<Mode> mode) {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  const std::uint64_t id = r.next_id;
  const std::uintptr_t handle = encode_handle(id, HandleKind::kMode);
  // Inserted before the CAS under the same lock, so any thread that sees the
  // handle in the slot also finds the mode registered.
  r.live.emplace(id, std::move(mode));
  std::uintptr_t expected = 0;
  if (!g_slot.compare_exchange_strong(expected, handle, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    r.live.erase(id);  // the id was never handed out; the next mode takes it
    throw StatusError(HIPACM_ERROR_MODE_ALREADY_ACTIVE,
                      "another hipacm mode is already active in this process; exit it first");
  }
  ++r.next_id;
  return to_mode_handle(handle);
}

hipacm_mode* active_mode() noexcept {
  return to_mode_handle(g_slot.load(std::memory_order_acquire));
}

std::shared_ptr<Mode> find_mode_for_submit(hipacm_mode* handle) {
  if (handle == nullptr) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "mode is NULL");
  const std::optional<std::uint64_t> id = Registry::id_of(handle);
  if (!id) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "unknown mode handle");
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  auto it = r.live.find(*id);
  if (it == r.live.end()) {
    if (r.issued(*id)) throw StatusError(HIPACM_ERROR_MODE_CLOSED, "the mode has exited");
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "unknown mode handle");
  }
  if (it->second->generation() != fork_epoch())
    throw StatusError(HIPACM_ERROR_MODE_CLOSED,
                      "the mode belongs to the parent process; enter a new mode after fork()");
  return it->second;
}

std::shared_ptr<Mode> begin_exit(hipacm_mode* handle) {
  if (handle == nullptr) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "mode is NULL");
  const std::optional<std::uint64_t> id = Registry::id_of(handle);
  if (!id) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "unknown mode handle");
  Registry& r = registry();
  std::shared_ptr<Mode> mode;
  {
    boost::lock_guard<boost::mutex> lock(r.mutex);
    auto it = r.live.find(*id);
    if (it == r.live.end())
      throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "unknown or already exited mode handle");
    mode = it->second;
  }
  if (!mode->claim_exit())
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "the mode is already exiting on another thread");
  if (mode->generation() != fork_epoch())
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "the mode belongs to the parent process and cannot be exited after fork()");
  // The reset comes first and cannot fail: whatever happens while collecting,
  // the process can enter a new mode. It only ever clears this mode's handle.
  std::uintptr_t expected = handle_value(handle);
  g_slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel, std::memory_order_acquire);
  return mode;
}

void finish_exit(hipacm_mode* handle) noexcept {
  const std::optional<std::uint64_t> id = Registry::id_of(handle);
  if (!id) return;
  Registry& r = registry();
  std::shared_ptr<Mode> doomed;
  boost::lock_guard<boost::mutex> lock(r.mutex);
  auto it = r.live.find(*id);
  if (it == r.live.end()) return;
  doomed = std::move(it->second);
  r.live.erase(it);
}

}  // namespace hipacm
