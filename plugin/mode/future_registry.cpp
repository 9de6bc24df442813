// SPDX-License-Identifier: MIT
// future_registry.cpp - the live hipacm_future handles, their reference counts and ownership.
#include "plugin/mode/future_registry.h"

#include <boost/thread/lock_guard.hpp>

#include "plugin/mode/handle_table.h"
#include "support/fork_epoch.h"
#include "support/status_error.h"

namespace hipacm {
namespace {

// The registry owns every future; the host holds counted handles into it. A stale, released or
// garbage handle is INVALID_ARGUMENT, never a crash and never another future.
using Registry = HandleTable<std::unique_ptr<Future>, HandleKind::kFuture>;

// Never destroyed: futures may be released by threads still running while
// exit() runs static destructors.
Registry& registry() { return ForkGuarded<Registry, ForkRank::kFutureRegistry>::instance(); }

// The live future a host handle names, or nullptr. Called under the lock.
Future* find(Registry& r, hipacm_future* handle) noexcept {
  std::unique_ptr<Future>* owned = r.find(handle);
  return owned != nullptr ? owned->get() : nullptr;
}

// Drops one reference; returns the future to destroy outside the lock.
std::unique_ptr<Future> drop(Registry& r, const Future* f) {
  auto it = r.live.find(f->handle_id());
  if (it == r.live.end()) return nullptr;
  if (it->second->drop_ref() != 0) return nullptr;
  std::unique_ptr<Future> last = std::move(it->second);
  r.live.erase(it);
  return last;
}

void release_raw(Future* f) noexcept {
  std::unique_ptr<Future> doomed;
  Registry& r = registry();
  {
    boost::lock_guard<boost::mutex> lock(r.mutex);
    doomed = drop(r, f);
  }
}

}  // namespace

FutureRef& FutureRef::operator=(FutureRef&& other) noexcept {
  if (this != &other) {
    if (future_ != nullptr) release_raw(future_);
    future_ = other.future_;
    other.future_ = nullptr;
  }
  return *this;
}

FutureRef::~FutureRef() {
  if (future_ != nullptr) release_raw(future_);
}

Future* FutureRef::release() noexcept {
  Future* f = future_;
  future_ = nullptr;
  return f;
}

FutureRef FutureRef::share() const {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  future_->add_ref();
  return FutureRef(future_);
}

FutureRef make_future(std::string key, std::string arch, Callbacks callbacks) {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  // The id is consumed only once the future is registered, so every id below
  // next_id named a real future.
  const std::uint64_t id = r.next_id;
  auto owned = std::make_unique<Future>(id, std::move(key), std::move(arch), callbacks);
  Future* f = owned.get();
  r.live.emplace(id, std::move(owned));
  ++r.next_id;
  f->add_ref();
  return FutureRef(f);
}

FutureRef acquire_future(hipacm_future* handle) {
  if (handle == nullptr) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "future is NULL");
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  Future* f = find(r, handle);
  if (f == nullptr)
    throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT,
                      "unknown future handle (already released, or not a hipacm_future)");
  f->add_ref();
  return FutureRef(f);
}

bool retain_future(hipacm_future* handle) noexcept {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  Future* f = find(r, handle);
  if (f == nullptr) return false;
  f->add_ref();
  return true;
}

bool release_future(hipacm_future* handle) noexcept {
  std::unique_ptr<Future> doomed;
  Registry& r = registry();
  {
    boost::lock_guard<boost::mutex> lock(r.mutex);
    Future* f = find(r, handle);
    if (f == nullptr) return false;
    doomed = drop(r, f);
  }
  return true;
}

std::size_t live_future_count() noexcept {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  return r.live.size();
}

}  // namespace hipacm
