// SPDX-License-Identifier: MIT
// compile_dispatch.cpp - the in-process compile step for any arch: NVRTC or hipRTC by prefix.
#include "hip_backend/dispatch/compile_dispatch.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <chrono>
#include <optional>

#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/machine/machine_budget.h"
#include "hip_backend/nvrtc/nvrtc_compiler.h"
#include "hip_backend/target_arch.h"
#include "hip_backend/working_directory_inputs.h"
#include "support/log.h"
#include "support/no_destructor.h"
#include "support/stats.h"

namespace hipacm::backend {
namespace {

/// The host's in-process hipRTC compiles, one at a time: they serialize under the ROCm lock
/// anyway, and a thread queued behind another's compile must not hold a machine slot meanwhile.
boost::mutex& inprocess_hiprtc_queue() {
  static NoDestructor<boost::mutex> mutex;
  return mutex.get();
}

}  // namespace

CompileResult compile_for_target(const CompileRequest& request) {
  if (is_nvidia_arch(request.arch)) return compile_with_nvrtc(request);
  return compile_with_hiprtc(request);
}

// Counted here and not in compile_for_target, which a worker runs too: a worker's compile is
// counted once, by the host's WorkerCompiler.
CompileResult InProcessCompiler::compile(const CompileRequest& request) {
  count_compile_started();
  CompileResult result;
  {
    // A compile in the host is compiler work on one of the machine's cores like a worker's, so it
    // holds a slot of the user's machine-wide budget too. (A worker's own compile does not: the
    // host that ordered it holds the slot.)
    std::optional<boost::lock_guard<boost::mutex>> queued;
    if (!is_nvidia_arch(request.arch)) queued.emplace(inprocess_hiprtc_queue());
    std::optional<std::chrono::steady_clock::time_point> deadline;
    const std::chrono::milliseconds limit(compile_timeout_ms_);
    if (limit.count() > 0) deadline = std::chrono::steady_clock::now() + limit;
    const MachineSlot slot = MachineBudget::instance().acquire(deadline);
    if (slot.timed_out()) {
      // Nothing ran: the timeout covered the wait for a slot that a stopped holder keeps.
      result.status = HIPACM_ERROR_TIMEOUT;
      result.error_message = slot_wait_timeout_message(request.source_name, limit, slot);
      count(stats().timeouts);
      log(LogLevel::kWarning, result.error_message);
    } else {
      // hipRTC's driver reads files from the working directory that the request does not name.
      const WorkingDirectoryWatch working_directory;
      result = compile_for_target(request);
      if (!is_nvidia_arch(request.arch)) result.not_cacheable_why = working_directory.verdict();
    }
  }
  count_compile_ended(result.status);
  return result;
}

}  // namespace hipacm::backend
