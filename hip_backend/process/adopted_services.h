// SPDX-License-Identifier: MIT
// adopted_services.h - compile services that became this process's children, reaped once they
// exit: a host that is a child subreaper adopts the service it starts.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace hipacm::backend {

/// Called once this process has started the compile service whose pid is `service`. The service
/// leaves its starter's process tree at once; normally init adopts it, but a process that made
/// itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER: supervisors, some test runners) adopts
/// it instead, and nothing else of the host would ever reap it. Then this keeps a pidfd for it.
void adopt_started_service(pid_t service) noexcept;

/// Reaps each adopted service that has exited, through its pidfd, so never another child of the
/// host's, and never blocking. Returns how many it reaped. Called at every order of a worker.
std::size_t reap_adopted_services() noexcept;

/// Adopted services not yet reaped (for tests).
std::size_t adopted_service_count() noexcept;

}  // namespace hipacm::backend
