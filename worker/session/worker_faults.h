// SPDX-License-Identifier: MIT
// worker_faults.h - test-only fault injection for hipacm-worker, off unless explicitly enabled.
#pragma once

#include <string>
#include <vector>

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// One injected fault. TEST HOOK: hipacm-worker honours $HIPACM_WORKER_FAULT
/// only when the test hooks' switch $HIPACM_TEST_HOOKS=1 is also set, so a stray
/// variable in a user's environment cannot break real compiles.
///
/// Spec: a comma-separated list of `kind[=value][:when=SUBSTRING]`, e.g.
///   "crash-segv:when=@SEGV@,hang:when=@HANG@,slow-start=300"
/// A fault with `when` fires only for requests whose source contains
/// SUBSTRING; without it, for every request. The first matching fault wins.
struct WorkerFault {
  enum class Kind {
    kCrashSegv,  ///< raise(SIGSEGV) instead of compiling
    kAbort,      ///< std::abort()
    kHang,       ///< block forever (the host's timeout must fire)
    kGarbage,    ///< write bytes that are not a frame, then keep reading
    kExit,       ///< _exit(value)
    kSlowStart,  ///< sleep `value` ms once at start-up, before serving
    kEcho,       ///< TIMING FAKE: skip hipRTC, sleep `value` ms, return the source
                 ///< bytes as a "code object" (for stress tests of the transport)
    kSpam,       ///< write `value` bytes to stderr, then answer as echo does
    kSlowExit,   ///< sleep `value` ms once the host has closed the connection, before exiting
  };
  Kind kind = Kind::kEcho;
  long value = 0;
  std::string when;

  /// Acts on the whole session (start or end), not on one request.
  bool whole_session() const { return kind == Kind::kSlowStart || kind == Kind::kSlowExit; }
};

/// Parses a spec; the Failure (INVALID_ARGUMENT) names any unknown kind or bad value.
Expected<std::vector<WorkerFault>> parse_worker_faults(const std::string& spec);

/// The first fault (other than slow-start and slow-exit) that applies to `request`, or null.
const WorkerFault* match_worker_fault(const std::vector<WorkerFault>& faults,
                                      const CompileRequest& request);

}  // namespace hipacm::backend
