// SPDX-License-Identifier: MIT
// worker_compiler.cpp - one compile: check out a worker, run the request, give the worker back.
#include "hip_backend/pool/worker_compiler.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "hip_backend/code_loading_options.h"
#include "hip_backend/codeobject/compile_result_check.h"
#include "hip_backend/pool/worker_pool.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::backend {
namespace {

/// A worker is another process, and what it sends is untrusted: a SUCCESS
/// counts only once hipacm's own check of the code object agrees. A worker
/// whose answer failed it is retired (the caller marks it unusable).
bool recheck_worker_success(const CompileRequest& request, CompileResult* result) {
  if (result->status != HIPACM_SUCCESS) return true;
  const Expected<void> checked = check_compile_result(request, result->code, result->lowered_names);
  if (checked) {
    // The host's one check of these bytes: the cache's store does not repeat it.
    result->code_checked = true;
    return true;
  }
  result->status = HIPACM_ERROR_COMPILATION;
  result->error_message = "the worker's result for " + request.source_name +
                          " failed hipacm's code-object check: " + checked.failure().message;
  result->code.clear();
  result->lowered_names.clear();
  return false;
}

}  // namespace

WorkerCompiler::WorkerCompiler(std::string worker_path, unsigned max_workers,
                               std::uint32_t compile_timeout_ms)
    : worker_path_(std::move(worker_path)),
      max_workers_(max_workers == 0 ? 1 : max_workers),
      compile_timeout_ms_(compile_timeout_ms) {}

CompileResult WorkerCompiler::compile(const CompileRequest& request) {
  try {
    CompileResult result;
    // The lease gives the worker back on every path, exceptions included; a
    // worker left mid-request is marked unusable and is killed, not reused.
    // The compile's timeout covers its wait for a machine-wide slot: a stopped process holding
    // the last one must not stall this compile past it.
    WorkerPool::Lease worker = WorkerPool::instance().checkout(worker_path_, max_workers_,
                                                               request.arch, compile_timeout_ms_);
    if (!worker && worker.machine_slot().timed_out()) {
      result.status = HIPACM_ERROR_TIMEOUT;
      result.error_message = slot_wait_timeout_message(
          request.source_name, std::chrono::milliseconds(compile_timeout_ms_),
          worker.machine_slot());
      count(stats().timeouts);
      log(LogLevel::kWarning, result.error_message);
      return result;
    }
    if (!worker) {
      result.status = HIPACM_ERROR_BACKEND_UNAVAILABLE;
      result.error_message = worker.error();
      return result;
    }
    // The run is the host's to count: the worker's own counters die with it.
    count_compile_started();
    // The wait for a slot is part of the compile's limit.
    const auto waited = static_cast<std::uint64_t>(worker.machine_slot().waited().count());
    result = worker->compile(request, compile_timeout_ms_,
                             static_cast<std::uint32_t>(std::min<std::uint64_t>(
                                 waited, std::numeric_limits<std::uint32_t>::max())));
    if (!recheck_worker_success(request, &result)) worker->mark_unusable();
    // -Xclang, -mllvm or a plugin may have left code or settings in the worker: it serves no
    // other compile (the worker also refuses to go back to the compile service).
    if (options_leave_compiler_state(request.options)) worker->mark_unusable();
    count_compile_ended(result.status);
    return result;
  } catch (...) {
    return failed_compile(failure_from_current_exception("hipacm-worker transport"));
  }
}

void WorkerCompiler::prestart(const std::string& arch, unsigned workers) noexcept {
  WorkerPool::instance().prestart(worker_path_, std::min(workers, max_workers_), arch,
                                  compile_timeout_ms_);
}

}  // namespace hipacm::backend
