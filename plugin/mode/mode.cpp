// SPDX-License-Identifier: MIT
// mode.cpp - one async compile mode: dedup map, pool, and exactly-once collection at exit.
#include "plugin/mode/mode.h"

#include <boost/thread/lock_guard.hpp>

#include "plugin/mode/device_loading.h"
#include "plugin/record/request_recorder.h"
#include "support/failure.h"
#include "support/fork_epoch.h"
#include "support/status_error.h"

namespace hipacm {

Mode::Mode(ModeSettings settings, std::shared_ptr<backend::Compiler> compiler)
    : settings_(std::move(settings)),
      compiler_(std::move(compiler)),
      generation_(fork_epoch()),
      pool_(settings_.max_workers) {
  // The host has entered the mode to compile soon; what it does before its first submit
  // (tracing, building sources) is time the workers can spend starting.
  if (settings_.prestart_workers > 0)
    compiler_->prestart(settings_.arch, settings_.prestart_workers);
}

Mode::~Mode() { pool_.join(); }

FutureRef Mode::submit(Submission submission) {
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    if (closed_) throw StatusError(HIPACM_ERROR_MODE_CLOSED, "the mode is exiting or has exited");
    if (auto it = by_key_.find(submission.key); it != by_key_.end()) return it->second.share();
  }
  record_request(submission.request);  // cache hits too: the host compiled them
  // A ready result (a persistent-cache hit) is served on this thread: no pool
  // thread wake-up, no queue. Looked up without the mode lock, since it may
  // read a database; the dedup check below is repeated for that reason.
  // Module loading stays on the pool threads (it can take milliseconds), so
  // with load_device a hit takes the pool path and is served there.
  // A miss keeps what the lookup learned (the cache key) for the pool's compile, which then
  // neither keys nor scans the request again.
  backend::CompileResult ready;
  std::shared_ptr<const backend::CompilePlan> plan;
  const bool is_ready =
      settings_.load_device < 0 && compiler_->look_up(submission.request, &ready, &plan);
  if (is_ready) load_into_device(&ready, settings_);  // lists the kernels; loads nothing

  boost::unique_lock<boost::mutex> lock(mutex_);
  if (closed_) throw StatusError(HIPACM_ERROR_MODE_CLOSED, "the mode is exiting or has exited");

  // Dedup under the same lock that exit uses to close: a key is either
  // scheduled once in this mode or refused, never both or twice.
  if (auto it = by_key_.find(submission.key); it != by_key_.end()) return it->second.share();

  completed_.reserve(by_key_.size() + 1);
  FutureRef future = make_future(submission.key, settings_.arch, submission.callbacks);
  FutureRef for_caller = future.share();
  auto [slot, inserted] = by_key_.emplace(submission.key, std::move(future));
  (void)inserted;
  if (is_ready) {
    slot->second->complete(std::move(ready));
    completed_.push_back(slot->second.get());  // capacity reserved above
    lock.unlock();
    completed_cv_.notify_all();
    return for_caller;
  }
  try {
    // The task owns its references; they keep the future alive even if the
    // host releases its handle before the compile ends.
    auto run_ref = std::make_shared<FutureRef>(slot->second.share());
    auto request = std::make_shared<backend::CompileRequest>(std::move(submission.request));
    pool_.submit([this, run_ref, request,
                  plan = std::move(plan)] { run_compile(*run_ref, *request, plan.get()); },
                 [this, run_ref] { cancel_compile(*run_ref); });
  } catch (...) {
    by_key_.erase(slot);
    throw;
  }
  return for_caller;
}

void Mode::run_compile(const FutureRef& future, const backend::CompileRequest& request,
                       const backend::CompilePlan* plan) noexcept {
  backend::CompileResult result;
  try {
    result = compiler_->compile_with_plan(request, plan);
  } catch (...) {
    Failure failure = failure_from_current_exception();
    result.status = failure.status;
    result.error_message = std::move(failure.message);
  }
  load_into_device(&result, settings_);
  const bool failed = result.status != HIPACM_SUCCESS;
  if (future->complete(std::move(result))) on_completed(future, failed);
}

void Mode::cancel_compile(const FutureRef& future) noexcept {
  backend::CompileResult cancelled;
  cancelled.status = HIPACM_ERROR_CANCELLED;
  cancelled.error_message = "cancelled by fail_fast after an earlier compile failed";
  if (future->complete(std::move(cancelled))) on_completed(future, false);
}

void Mode::on_completed(const FutureRef& future, bool failed) noexcept {
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    completed_.push_back(future.get());  // capacity reserved at submit
  }
  completed_cv_.notify_all();
  if (failed && settings_.fail_fast) pool_.cancel_queued();
}

ExitOutcome Mode::exit() {
  std::size_t total = 0;
  {
    boost::lock_guard<boost::mutex> lock(mutex_);
    closed_ = true;
    total = by_key_.size();
  }

  ExitOutcome outcome;
  while (outcome.collected < total) {
    Future* next = nullptr;
    {
      boost::unique_lock<boost::mutex> lock(mutex_);
      completed_cv_.wait(lock, [this] { return collect_cursor_ < completed_.size(); });
      next = completed_[collect_cursor_++];
    }
    // Callbacks run here without the mode lock: they may enter a new mode.
    const hipacm_status status = next->collect();
    ++outcome.collected;
    if (status != HIPACM_SUCCESS && !outcome.first_failure) {
      outcome.status = status;
      outcome.first_failure = by_key_.at(next->key()).share();
      if (settings_.fail_fast) pool_.cancel_queued();
    }
  }
  pool_.join();
  if (settings_.ignore_errors) {
    outcome.status = HIPACM_SUCCESS;
    outcome.first_failure = FutureRef();
  }
  return outcome;
}

}  // namespace hipacm
