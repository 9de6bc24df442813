// SPDX-License-Identifier: MIT
// worker_session.h - what a hipacm-worker process does once it has its socket: compile until EOF.
#pragma once

#include <sys/types.h>

#include <string>

namespace hipacm::backend {

/// Serves compile requests on `socket_fd` until the other end closes it, and returns the
/// process's exit code. `parent`: the host whose death ends the session at once (a worker the
/// host spawned); 0 for none (a worker of the compile service, which stops it instead).
/// `temp_dir`: the worker's private TMPDIR, emptied after each compile; empty for none.
int run_worker_session(int socket_fd, pid_t parent, const std::string& temp_dir);

}  // namespace hipacm::backend
