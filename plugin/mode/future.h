// SPDX-License-Identifier: MIT
// future.h - one compile's outcome: reference counted, with exactly-once callbacks.
#pragma once

#include <hipacm/hipacm.h>

#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>
#include <boost/thread/thread.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "plugin/mode/submission.h"

namespace hipacm {

/// The object behind a hipacm_future handle. Producers call complete() once;
/// any number of threads may wait, and collect() runs the host's finalize or
/// cleanup exactly once, on whichever thread gets there first, while the
/// others block until that callback has returned.
class Future {
 public:
  /// `handle_id` is the registry's never-reused id, which the host's handle encodes.
  Future(std::uint64_t handle_id, std::string key, std::string arch, Callbacks callbacks);
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;

  /// Publishes the outcome; later calls are ignored (a cancel racing a
  /// completion must not overwrite it). Returns true if this call won.
  bool complete(backend::CompileResult result) noexcept;

  /// True once complete() has run.
  bool done() const noexcept { return done_.load(std::memory_order_acquire); }

  /// Waits up to timeout_ms (< 0 = forever); true when done.
  bool wait_for(std::int64_t timeout_ms);

  /// NOT_READY while pending, else the outcome (including a finalize failure
  /// once the callbacks have run).
  hipacm_status status() const;

  /// Blocks until done, runs the callbacks exactly once, and returns the
  /// final outcome. Re-entrant: called from inside its own callback it
  /// returns the compile outcome at once.
  hipacm_status collect();

  /// The kernel view; valid only after a successful completion.
  const hipacm_kernel* kernel() const noexcept { return &kernel_; }

  const std::string& key() const noexcept { return key_; }
  /// Log and error message; stable once done ("" before).
  const char* log() const noexcept;
  const char* error_message() const noexcept;

  std::uint64_t generation() const noexcept { return generation_; }

  /// The registry's id for this future and the host handle that encodes it
  /// (also the `f` given to callbacks).
  std::uint64_t handle_id() const noexcept { return handle_id_; }
  hipacm_future* handle() const noexcept;

  /// Reference count; only the registry manipulates it (under its lock).
  std::uint32_t add_ref() noexcept { return refs_.fetch_add(1, std::memory_order_relaxed) + 1; }
  std::uint32_t drop_ref() noexcept { return refs_.fetch_sub(1, std::memory_order_acq_rel) - 1; }

 private:
  enum class CallbackState { kNotRun, kRunning, kRan };

  void build_kernel_view();
  bool orphaned_by_fork() const noexcept;

  const std::uint64_t handle_id_;
  const std::string key_;
  const std::string arch_;
  const Callbacks callbacks_;
  const std::uint64_t generation_;
  std::atomic<std::uint32_t> refs_{0};

  mutable boost::mutex mutex_;
  boost::condition_variable changed_;
  std::atomic<bool> done_{false};
  backend::CompileResult result_;  // written once, before done_ is released
  hipacm_status final_status_ = HIPACM_ERROR_NOT_READY;
  CallbackState callback_state_ = CallbackState::kNotRun;
  boost::thread::id callback_thread_;
  std::string finalize_message_;

  hipacm_kernel kernel_{};
  std::vector<const char*> lowered_name_ptrs_;
  std::vector<const char*> function_name_ptrs_;
  std::vector<void*> function_ptrs_;
};

}  // namespace hipacm
