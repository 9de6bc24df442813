// SPDX-License-Identifier: MIT
// mode.h - one async compile mode: dedup map, pool, and exactly-once collection at exit.
#pragma once

#include <hipacm/hipacm.h>

#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hip_backend/compiler.h"
#include "plugin/mode/future_registry.h"
#include "plugin/mode/mode_settings.h"
#include "plugin/mode/submission.h"
#include "plugin/mode/thread_pool.h"

namespace hipacm {

/// What exit() found: the status to return and the first failure, if any.
struct ExitOutcome {
  hipacm_status status = HIPACM_SUCCESS;
  FutureRef first_failure;
  std::size_t collected = 0;
};

/// The object behind a hipacm_mode handle. The process-wide slot and the
/// handle registry live in mode_registry; this class is the mode itself.
class Mode {
 public:
  Mode(ModeSettings settings, std::shared_ptr<backend::Compiler> compiler);
  Mode(const Mode&) = delete;
  Mode& operator=(const Mode&) = delete;
  ~Mode();

  /// Dedups by key and schedules new keys. Throws MODE_CLOSED once exit has
  /// begun. Returns a reference for the caller.
  FutureRef submit(Submission submission);

  /// Closes the mode to submits, collects every future in completion order
  /// (callbacks run here, exactly once each), and joins the pool.
  ExitOutcome exit();

  /// Claims the right to exit; only the first caller gets true.
  bool claim_exit() noexcept { return !exit_claimed_.exchange(true, std::memory_order_acq_rel); }

  const ModeSettings& settings() const noexcept { return settings_; }
  std::uint64_t generation() const noexcept { return generation_; }

 private:
  /// The pool's compile of a request, with what the submitting thread's lookup learned of it
  /// (`plan`, possibly null).
  void run_compile(const FutureRef& future, const backend::CompileRequest& request,
                   const backend::CompilePlan* plan) noexcept;
  void cancel_compile(const FutureRef& future) noexcept;
  void on_completed(const FutureRef& future, bool failed) noexcept;

  const ModeSettings settings_;
  const std::shared_ptr<backend::Compiler> compiler_;
  const std::uint64_t generation_;
  std::atomic<bool> exit_claimed_{false};

  boost::mutex mutex_;
  boost::condition_variable completed_cv_;
  bool closed_ = false;
  std::unordered_map<std::string, FutureRef> by_key_;  // the mode's own references
  // Completion order. Reserved at submit so that a pool thread's push
  // never allocates: a lost entry would make exit() wait forever.
  std::vector<Future*> completed_;
  std::size_t collect_cursor_ = 0;
  ThreadPool pool_;  // last: joined first on destruction, while the rest lives
};

}  // namespace hipacm
