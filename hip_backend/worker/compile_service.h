// SPDX-License-Identifier: MIT
// compile_service.h - the per-user compile service: a warm, single-threaded zygote that forks
// ready hipacm-workers for any hipacm process of its user and outlives them until idle.
#pragma once

#include <string>

namespace hipacm::backend {

/// How long a service with no workers and no connections waits before it exits
/// ($HIPACM_SERVICE_IDLE_MS; default five minutes).
unsigned long compile_service_idle_ms();

/// `hipacm-worker --service SOCKET`. Detaches from its starter: the calling process exits 0
/// once the service listens on `socket_path` (1, with the reason on stderr, when it cannot),
/// and the service itself, in its own process group, serves until it has been idle for
/// compile_service_idle_ms(). Each order is checked (the peer's uid must be ours), the compiler
/// for its arch is loaded and run once in the service, and a worker is forked from that warm
/// state, with the ordering process's environment, working directory and TMPDIR. The worker's
/// socket, output pipe and pidfd go to the orderer; its exit status follows on the order's
/// connection, and closing that connection kills the worker.
int run_compile_service(const std::string& socket_path);

/// `hipacm-worker --service-worker TEMP_DIR`: a worker that the service spawned rather than
/// forked (once the service's compilers have started threads, forking it is unsafe), with its
/// first host's socket on fd 3, its output on 1 and 2 and its line to the service on 4. Serves
/// hosts until the service closes the line.
int run_service_worker(const std::string& temp_dir);

}  // namespace hipacm::backend
