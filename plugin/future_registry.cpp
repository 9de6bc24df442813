// future_registry.cpp - the live hipacm_future handles, their reference counts and ownership.
#include "plugin/future_registry.h"
#include "hip_backend/no_destructor.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <unordered_map>

#include "plugin/error.h"

namespace hipacm {
namespace {

// The registry owns every future; the host holds counted handles into it.
// Looking handles up here is what turns a stale or garbage pointer into
// INVALID_ARGUMENT instead of a crash.
struct Registry {
  boost::mutex mutex;
  std::unordered_map<const Future*, std::unique_ptr<Future>> futures;
};

// Never destroyed: futures may be released by threads still running while
// exit() runs static destructors.
Registry& registry() {
  static backend::NoDestructor<Registry> instance;
  return *instance;
}

// Drops one reference; returns the future to destroy outside the lock.
std::unique_ptr<Future> drop(Registry& r, const Future* f) {
  auto it = r.futures.find(f);
  if (it == r.futures.end()) return nullptr;
  if (it->second->drop_ref() != 0) return nullptr;
  std::unique_ptr<Future> last = std::move(it->second);
  r.futures.erase(it);
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
  auto owned = std::make_unique<Future>(std::move(key), std::move(arch), callbacks);
  Future* f = owned.get();
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  f->add_ref();
  r.futures.emplace(f, std::move(owned));
  return FutureRef(f);
}

FutureRef acquire_future(hipacm_future* handle) {
  if (handle == nullptr) throw Error(HIPACM_ERROR_INVALID_ARGUMENT, "future is NULL");
  auto* f = reinterpret_cast<Future*>(handle);
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  if (r.futures.find(f) == r.futures.end())
    throw Error(HIPACM_ERROR_INVALID_ARGUMENT,
                "unknown future handle (already released, or not a hipacm_future)");
  f->add_ref();
  return FutureRef(f);
}

bool retain_future(hipacm_future* handle) noexcept {
  auto* f = reinterpret_cast<Future*>(handle);
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  if (handle == nullptr || r.futures.find(f) == r.futures.end()) return false;
  f->add_ref();
  return true;
}

bool release_future(hipacm_future* handle) noexcept {
  auto* f = reinterpret_cast<Future*>(handle);
  std::unique_ptr<Future> doomed;
  Registry& r = registry();
  {
    boost::lock_guard<boost::mutex> lock(r.mutex);
    if (handle == nullptr || r.futures.find(f) == r.futures.end()) return false;
    doomed = drop(r, f);
  }
  return true;
}

std::size_t live_future_count() noexcept {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  return r.futures.size();
}

void future_registry_prepare_fork() noexcept { registry().mutex.lock(); }

void future_registry_after_fork() noexcept { registry().mutex.unlock(); }

}  // namespace hipacm
