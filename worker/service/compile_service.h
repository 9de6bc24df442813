// SPDX-License-Identifier: MIT
// compile_service.h - the per-user compile service: a warm, single-threaded zygote that forks
// ready hipacm-workers for any hipacm process of its user and outlives them until idle.
#pragma once

#include <string>

namespace hipacm::backend {

/// How long a service with no workers and no connections waits before it exits
/// ($HIPACM_IDLE_MS's second number; default five minutes).
unsigned long compile_service_idle_ms();

/// `hipacm-worker --service SOCKET`. Detaches from its starter: the calling process exits 0
/// once the service listens on `socket_path` (1, with the reason on stderr, when it cannot),
/// and the service itself, in its own process group, serves until it has been idle for
/// compile_service_idle_ms(). Each order is checked (the peer's uid must be ours) and answered
/// with a worker set up with the orderer's environment, working directory and TMPDIR: one that
/// an earlier host gave back, with the order's compiler warm, else one forked from the service
/// after it loaded and ran that compiler once (while the service has one thread), else one
/// spawned. The worker's socket, output pipe and pidfd go to the orderer; its exit status
/// follows on the order's connection. Closing that connection gives the worker back; one that
/// does not come back within 2 s (its host died mid-compile) is killed.
int run_compile_service(const std::string& socket_path);

}  // namespace hipacm::backend
