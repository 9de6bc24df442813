// SPDX-License-Identifier: MIT
// future.cpp - one compile's outcome: reference counted, with exactly-once callbacks.
#include "plugin/mode/future.h"

#include <boost/chrono.hpp>

#include <optional>

#include "hip_backend/device/module_loader.h"
#include "plugin/mode/handle_ids.h"
#include "support/fork_epoch.h"

namespace hipacm {
namespace {

using WaitClock = boost::chrono::steady_clock;

// No finite wait is longer than this; beyond it a timeout means forever. It
// keeps now + timeout far inside the range of every clock the wait may be
// converted to (steady and system nanoseconds overflow after 292 years).
constexpr std::int64_t kLongestFiniteWaitMs = std::int64_t{100} * 366 * 24 * 3600 * 1000;

// The deadline `timeout_ms` from now, or nullopt for "wait forever": a
// negative timeout, or one so long that the deadline arithmetic would overflow
// (a wrapped deadline lies in the past, and INT64_MAX would not wait at all).
std::optional<WaitClock::time_point> deadline_after(std::int64_t timeout_ms) {
  if (timeout_ms < 0 || timeout_ms > kLongestFiniteWaitMs) return std::nullopt;
  const WaitClock::time_point now = WaitClock::now();
  const auto room =
      boost::chrono::duration_cast<boost::chrono::milliseconds>(WaitClock::time_point::max() - now);
  if (timeout_ms >= room.count()) return std::nullopt;
  return now + boost::chrono::milliseconds(timeout_ms);
}

}  // namespace

Future::Future(std::uint64_t handle_id, std::string key, std::string arch, Callbacks callbacks)
    : handle_id_(handle_id),
      key_(std::move(key)),
      arch_(std::move(arch)),
      callbacks_(callbacks),
      generation_(fork_epoch()) {
  kernel_.struct_size = sizeof(hipacm_kernel);
  kernel_.key = key_.c_str();
  kernel_.arch = arch_.c_str();
  kernel_.log = "";
}

hipacm_future* Future::handle() const noexcept {
  return reinterpret_cast<hipacm_future*>(encode_handle(handle_id_, HandleKind::kFuture));
}

bool Future::complete(backend::CompileResult result) noexcept {
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    if (done_.load(std::memory_order_relaxed)) return false;
    result_ = std::move(result);
    if (result_.status == HIPACM_SUCCESS && result_.code.empty()) {
      result_.status = HIPACM_ERROR_INTERNAL;
      result_.error_message = "the compiler reported success but produced no code object";
    }
    try {
      build_kernel_view();
    } catch (...) {
      result_.status = HIPACM_ERROR_OUT_OF_MEMORY;
      result_.error_message = "out of memory while publishing the kernel";
      lowered_name_ptrs_.clear();
      kernel_.lowered_names = nullptr;
      kernel_.num_lowered_names = 0;
      function_name_ptrs_.clear();
      function_ptrs_.clear();
      kernel_.module = nullptr;
      kernel_.function_names = nullptr;
      kernel_.functions = nullptr;
      kernel_.num_functions = 0;
    }
    final_status_ = result_.status;
    // Release pairs with the acquire in done(): readers that see done_ see
    // the result without taking the mutex.
    done_.store(true, std::memory_order_release);
  }
  changed_.notify_all();
  return true;
}

void Future::build_kernel_view() {
  kernel_.code = result_.code.data();
  kernel_.code_size = result_.code.size();
  kernel_.log = result_.log.c_str();
  kernel_.compile_seconds = result_.compile_seconds;
  kernel_.from_cache = result_.from_cache ? 1 : 0;
  lowered_name_ptrs_.clear();
  lowered_name_ptrs_.reserve(result_.lowered_names.size());
  for (const auto& name : result_.lowered_names) lowered_name_ptrs_.push_back(name.c_str());
  kernel_.lowered_names = lowered_name_ptrs_.empty() ? nullptr : lowered_name_ptrs_.data();
  kernel_.num_lowered_names = lowered_name_ptrs_.size();

  const auto& names = result_.function_names;
  const backend::LoadedModule* module = result_.module.get();
  function_name_ptrs_.clear();
  function_ptrs_.assign(names.size(), nullptr);
  function_name_ptrs_.reserve(names.size());
  for (const auto& name : names) function_name_ptrs_.push_back(name.c_str());
  if (module != nullptr && module->functions().size() == names.size()) {
    function_ptrs_ = module->functions();
  }
  kernel_.module = module != nullptr ? module->module() : nullptr;
  kernel_.function_names = function_name_ptrs_.empty() ? nullptr : function_name_ptrs_.data();
  kernel_.functions = function_ptrs_.empty() ? nullptr : function_ptrs_.data();
  kernel_.num_functions = names.size();
}

bool Future::orphaned_by_fork() const noexcept {
  // In a forked child, the thread that would complete this future is gone.
  return !done() && generation_ != fork_epoch();
}

bool Future::wait_for(std::int64_t timeout_ms) {
  if (orphaned_by_fork()) return true;
  boost::unique_lock<boost::mutex> lock(mutex_);
  auto is_done = [this] { return done_.load(std::memory_order_relaxed); };
  const std::optional<WaitClock::time_point> deadline = deadline_after(timeout_ms);
  if (!deadline) {
    changed_.wait(lock, is_done);
    return true;
  }
  return changed_.wait_until(lock, *deadline, is_done);
}

hipacm_status Future::status() const {
  if (orphaned_by_fork()) return HIPACM_ERROR_CANCELLED;
  if (!done()) return HIPACM_ERROR_NOT_READY;
  boost::lock_guard<boost::mutex> lock(mutex_);
  return final_status_;
}

hipacm_status Future::collect() {
  if (orphaned_by_fork()) return HIPACM_ERROR_CANCELLED;
  boost::unique_lock<boost::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return done_.load(std::memory_order_relaxed); });

  if (callback_state_ == CallbackState::kRan) return final_status_;
  if (callback_state_ == CallbackState::kRunning) {
    // A callback that asks for its own future's result gets the compile
    // outcome; waiting for itself would deadlock.
    if (callback_thread_ == boost::this_thread::get_id()) return result_.status;
    changed_.wait(lock, [this] { return callback_state_ == CallbackState::kRan; });
    return final_status_;
  }

  callback_state_ = CallbackState::kRunning;
  callback_thread_ = boost::this_thread::get_id();
  const hipacm_status compiled = result_.status;
  lock.unlock();

  // Host code runs without our lock held so it may call back into hipacm.
  // A C++ host may throw through its callback; that must neither escape
  // nor leave the state stuck at kRunning with waiters blocked forever.
  hipacm_status outcome = compiled;
  if (compiled == HIPACM_SUCCESS && callbacks_.finalize != nullptr) {
    try {
      if (callbacks_.finalize(callbacks_.user_data, handle()) != 0)
        outcome = HIPACM_ERROR_FINALIZE_FAILED;
    } catch (...) {
      outcome = HIPACM_ERROR_FINALIZE_FAILED;
    }
  }
  if (outcome != HIPACM_SUCCESS && callbacks_.cleanup != nullptr) {
    try {
      callbacks_.cleanup(callbacks_.user_data, handle());
    } catch (...) {
      // Nothing to report to: the outcome already says the compile failed.
    }
  }

  lock.lock();
  if (outcome == HIPACM_ERROR_FINALIZE_FAILED)
    finalize_message_ = "the finalize callback of '" + key_ + "' returned nonzero";
  final_status_ = outcome;
  callback_state_ = CallbackState::kRan;
  lock.unlock();
  changed_.notify_all();
  return outcome;
}

const char* Future::log() const noexcept {
  if (!done()) return "";
  return result_.log.c_str();
}

const char* Future::error_message() const noexcept {
  if (orphaned_by_fork()) return "the compile was in flight in the parent process when it forked";
  if (!done()) return "";
  boost::lock_guard<boost::mutex> lock(mutex_);
  // finalize_message_ is only written once, before kRan; the pointer stays
  // valid because it is never written again.
  if (callback_state_ == CallbackState::kRan && !finalize_message_.empty())
    return finalize_message_.c_str();
  return result_.error_message.c_str();
}

}  // namespace hipacm
