// mode_registry.cpp - the process-wide mode slot and the table of live mode handles.
#include "plugin/mode_registry.h"
#include "hip_backend/no_destructor.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <atomic>
#include <deque>
#include <unordered_map>

#include "plugin/error.h"
#include "plugin/fork_generation.h"

namespace hipacm {
namespace {

// Constant-initialised: no global constructor runs when the plugin loads.
std::atomic<Mode*> g_slot{nullptr};

constexpr std::size_t kMaxTombstones = 4096;

struct Registry {
  boost::mutex mutex;
  std::unordered_map<const Mode*, std::shared_ptr<Mode>> live;
  // Exited handles, most recent last: a submit through one gets MODE_CLOSED.
  std::deque<const Mode*> tombstones;
};

// Never destroyed: a host may return from main() with a mode still active,
// and its pool threads (and exit-time destructors of futures) still use it.
Registry& registry() {
  static backend::NoDestructor<Registry> instance;
  return *instance;
}

Mode* from_handle(hipacm_mode* handle) { return reinterpret_cast<Mode*>(handle); }
hipacm_mode* to_mode_handle(Mode* mode) { return reinterpret_cast<hipacm_mode*>(mode); }

bool is_tombstone(const Registry& r, const Mode* m) {
  for (const Mode* t : r.tombstones)
    if (t == m) return true;
  return false;
}

}  // namespace

hipacm_mode* claim_slot(std::shared_ptr<Mode> mode) {
  Registry& r = registry();
  Mode* raw = mode.get();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  // Inserted before the CAS under the same lock, so any thread that sees the
  // mode in the slot also finds it registered.
  r.live.emplace(raw, std::move(mode));
  Mode* expected = nullptr;
  if (!g_slot.compare_exchange_strong(expected, raw, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    r.live.erase(raw);
    throw Error(HIPACM_ERROR_MODE_ALREADY_ACTIVE,
                "another hipacm mode is already active in this process; exit it first");
  }
  std::erase(r.tombstones, raw);  // the address may be reused
  return to_mode_handle(raw);
}

hipacm_mode* active_mode() noexcept {
  return to_mode_handle(g_slot.load(std::memory_order_acquire));
}

std::shared_ptr<Mode> find_mode_for_submit(hipacm_mode* handle) {
  if (handle == nullptr) throw Error(HIPACM_ERROR_INVALID_ARGUMENT, "mode is NULL");
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  auto it = r.live.find(from_handle(handle));
  if (it == r.live.end()) {
    if (is_tombstone(r, from_handle(handle)))
      throw Error(HIPACM_ERROR_MODE_CLOSED, "the mode has exited");
    throw Error(HIPACM_ERROR_INVALID_ARGUMENT, "unknown mode handle");
  }
  if (it->second->generation() != fork_generation())
    throw Error(HIPACM_ERROR_MODE_CLOSED,
                "the mode belongs to the parent process; enter a new mode after fork()");
  return it->second;
}

std::shared_ptr<Mode> begin_exit(hipacm_mode* handle) {
  if (handle == nullptr) throw Error(HIPACM_ERROR_INVALID_ARGUMENT, "mode is NULL");
  Registry& r = registry();
  std::shared_ptr<Mode> mode;
  {
    boost::lock_guard<boost::mutex> lock(r.mutex);
    auto it = r.live.find(from_handle(handle));
    if (it == r.live.end())
      throw Error(HIPACM_ERROR_INVALID_ARGUMENT, "unknown or already exited mode handle");
    mode = it->second;
  }
  if (!mode->claim_exit())
    throw Error(HIPACM_ERROR_INVALID_ARGUMENT, "the mode is already exiting on another thread");
  if (mode->generation() != fork_generation())
    throw Error(HIPACM_ERROR_INVALID_ARGUMENT,
                "the mode belongs to the parent process and cannot be exited after fork()");
  // The reset comes first and cannot fail: whatever happens while collecting,
  // the process can enter a new mode.
  Mode* expected = mode.get();
  g_slot.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                 std::memory_order_acquire);
  return mode;
}

void finish_exit(hipacm_mode* handle) noexcept {
  Registry& r = registry();
  std::shared_ptr<Mode> doomed;
  boost::lock_guard<boost::mutex> lock(r.mutex);
  auto it = r.live.find(from_handle(handle));
  if (it == r.live.end()) return;
  doomed = std::move(it->second);
  r.live.erase(it);
  try {
    if (r.tombstones.size() == kMaxTombstones) r.tombstones.pop_front();
    r.tombstones.push_back(from_handle(handle));
  } catch (...) {
    // Only the nicer MODE_CLOSED message is lost; the handle stays invalid.
  }
}

void mode_registry_prepare_fork() noexcept { registry().mutex.lock(); }

void mode_registry_parent_after_fork() noexcept { registry().mutex.unlock(); }

void mode_registry_child_after_fork() noexcept {
  g_slot.store(nullptr, std::memory_order_release);
  registry().mutex.unlock();
}

}  // namespace hipacm
