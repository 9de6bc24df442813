// SPDX-License-Identifier: MIT
// child_process.h - runs `hipacm run`'s COMMAND with an environment, forwards signals, and turns
// how it ended into the exit status the shell would show.
#pragma once

#include <string>
#include <vector>

namespace hipacm::cli {

/// `hipacm run`'s exit statuses of its own, those of env(1) and the shells: COMMAND's status
/// otherwise.
enum RunExitCode : int {
  kRunSetupFailed = 125,     ///< hipacm run could not set up (no intercept library, no temp file)
  kRunCannotExecute = 126,   ///< COMMAND was found but cannot be executed
  kRunNotFound = 127,        ///< COMMAND was not found
  kRunKilledBySignal = 128,  ///< + the signal's number, when COMMAND was killed by one
};

/// How the child ended.
struct ChildOutcome {
  int exit_status = 0;  ///< what `hipacm run` exits with
  std::string error;    ///< non-empty when COMMAND could not be started: what to print
};

/// Starts `argv` (searched on PATH when it has no slash) with `environment`, forwards SIGINT,
/// SIGTERM, SIGHUP and SIGQUIT that are sent to this process alone (a terminal's ^C reaches the
/// child itself, as it is in the same process group), waits for it, and returns its exit status,
/// 128 + N when signal N killed it, or 126/127 with a message when it could not be started.
ChildOutcome run_child(const std::vector<std::string>& argv,
                       const std::vector<std::string>& environment);

}  // namespace hipacm::cli
