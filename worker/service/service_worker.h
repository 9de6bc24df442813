// SPDX-License-Identifier: MIT
// service_worker.h - the worker side of the compile service: how a worker it forked or spawned
// serves host after host.
#pragma once

#include <string>

#include "hip_backend/protocol/service_wire.h"

namespace hipacm::backend {

/// A service worker's fixed descriptors: stdin on /dev/null, stdout and stderr on its host's
/// output pipe, its host's socket on 3 and its line back to the service on 4.
inline constexpr int kServiceWorkerSocketFd = 3;
inline constexpr int kServiceWorkerChannelFd = 4;

/// In a child just forked from the (single-threaded) service: puts `child_socket`, `output` and
/// `channel` on the fixed descriptors, closes every other, takes the first order's environment
/// and working directory, then serves that host and every later one the service assigns over
/// its line, until the service closes it. Never returns.
[[noreturn]] void become_service_worker(const service_wire::WorkerOrder& first, int child_socket,
                                        int output, int channel);

/// `hipacm-worker --service-worker TEMP_DIR`: a worker that the service spawned rather than
/// forked (once the service's compilers have started threads, forking it is unsafe), started with
/// its fixed descriptors, environment and working directory in place. Serves hosts as above;
/// returns only on a bad command line.
int run_service_worker(const std::string& temp_dir);

}  // namespace hipacm::backend
