// SPDX-License-Identifier: MIT
// callbacks.hpp - how a request's finalize and cleanup callables cross the C callback boundary.
#ifndef HIPACM_CPP_CALLBACKS_HPP
#define HIPACM_CPP_CALLBACKS_HPP

#include <hipacm/cpp/error.hpp>

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace hipacm {

namespace detail {

/// Messages of finalize callables that failed, by future handle. One per mode
/// (or per compile() call); the mode keeps each of its futures alive until it
/// exits, so an address names one future here.
struct FinalizeErrors {
  std::mutex mutex;
  std::unordered_map<const void*, std::string> messages;

  void record(const void* f, std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    messages[f] = std::move(message);
  }
  std::optional<std::string> find(const void* f) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = messages.find(f);
    if (it == messages.end()) return std::nullopt;
    return it->second;
  }
};

using FinalizeFn = std::function<void(const hipacm_kernel&)>;
using CleanupFn = std::function<void(const Error&)>;

/// The user_data of one submit: the callables, and where a finalize failure goes.
struct Slot {
  std::mutex mutex;
  FinalizeFn finalize;
  CleanupFn cleanup;
  std::optional<std::string> finalize_error;
  std::shared_ptr<FinalizeErrors> errors;

  /// Destroys the callables that never ran (outside the lock).
  void discard() noexcept {
    FinalizeFn f;
    CleanupFn c;
    {
      std::lock_guard<std::mutex> lock(mutex);
      f.swap(finalize);
      c.swap(cleanup);
    }
  }
};

inline int finalize_trampoline(void* user_data, hipacm_future* f) noexcept {
  auto* slot = static_cast<Slot*>(user_data);
  FinalizeFn fn;
  {
    std::lock_guard<std::mutex> lock(slot->mutex);
    fn.swap(slot->finalize);
  }
  // Nothing may propagate into C: every exception is caught here.
  const char* failure = nullptr;
  std::string what;
  try {
    if (fn) {
      const hipacm_kernel* kernel = nullptr;
      // Inside its own callback this returns the compile outcome at once.
      if (hipacm_future_result(f, &kernel) != HIPACM_SUCCESS || kernel == nullptr)
        failure = "the kernel was not available to the finalize callback";
      else
        fn(*kernel);
    }
  } catch (const std::exception& e) {
    failure = "the finalize callback threw";
    try {
      what = e.what();
    } catch (...) {
    }
  } catch (...) {
    failure = "the finalize callback threw a non-std::exception";
  }
  fn = nullptr;
  if (failure == nullptr) {
    // Success: cleanup will never run; free it now.
    CleanupFn c;
    std::lock_guard<std::mutex> lock(slot->mutex);
    c.swap(slot->cleanup);
    return 0;
  }
  try {
    std::string message = what.empty() ? std::string(failure) : what;
    {
      std::lock_guard<std::mutex> lock(slot->mutex);
      slot->finalize_error = message;
    }
    if (slot->errors) slot->errors->record(f, std::move(message));
  } catch (...) {
    // Out of memory while recording: the status still says FINALIZE_FAILED.
  }
  return 1;
}

inline void cleanup_trampoline(void* user_data, hipacm_future* f) noexcept {
  auto* slot = static_cast<Slot*>(user_data);
  FinalizeFn unrun;
  CleanupFn fn;
  std::optional<std::string> finalize_error;
  {
    std::lock_guard<std::mutex> lock(slot->mutex);
    unrun.swap(slot->finalize);  // a failed compile never runs finalize
    fn.swap(slot->cleanup);
    finalize_error.swap(slot->finalize_error);
  }
  unrun = nullptr;
  if (!fn) return;
  try {
    const std::string key = to_string(hipacm_future_key(f));
    const std::string log = to_string(hipacm_future_log(f));
    if (finalize_error) {
      fn(Error(Status::FinalizeFailed,
               "the finalize callback of '" + key + "' failed: " + *finalize_error, key, log));
    } else {
      // During the callback the status is the compile's outcome.
      fn(Error(static_cast<Status>(hipacm_future_status(f)),
               to_string(hipacm_future_error_message(f)), key, log));
    }
  } catch (const std::exception& e) {
    log_line("the cleanup callback threw: ", e.what());
  } catch (...) {
    log_line("the cleanup callback threw a non-std::exception");
  }
}

inline void attach(const std::shared_ptr<Slot>& slot, hipacm_request& req) noexcept {
  req.finalize = &finalize_trampoline;
  req.cleanup = &cleanup_trampoline;
  req.user_data = slot.get();
}

}  // namespace detail

}  // namespace hipacm

#endif  // HIPACM_CPP_CALLBACKS_HPP
