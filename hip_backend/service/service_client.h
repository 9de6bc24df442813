// SPDX-License-Identifier: MIT
// service_client.h - how a hipacm process finds, starts and orders workers from its user's
// compile service.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "hip_backend/protocol/service_wire.h"
#include "support/files/unique_fd.h"
#include "support/settings.h"

namespace hipacm::backend {

/// A worker forked by the compile service and handed to this process. Every descriptor is
/// registered with WorkerFdRegistry.
struct ServiceWorker {
  pid_t pid = -1;
  UniqueFd socket;   ///< the worker protocol, as with a spawned worker
  UniqueFd output;   ///< the worker's stdout and stderr
  UniqueFd pidfd;    ///< to wait for and kill the worker, which is not our child
  UniqueFd control;  ///< the order's connection: the exit status arrives here; closing it kills
};

/// What $HIPACM_ISOLATION's service= part (or the deprecated $HIPACM_COMPILE_SERVICE) asks for:
/// kAuto (unset or "auto": the service, unless this host would be left its zombie), kOn ("on": the
/// service, always) or kOff ("off", or a value that is none of these: this process spawns its own
/// workers). The settings' own type, so that the value needs no translation.
using CompileServiceSetting = settings::CompileService;

/// The setting; an unknown value reads as off, with *problem (when given) saying so. A privileged
/// (setuid) process reads every variable as unset, but never uses the service either.
CompileServiceSetting compile_service_setting(std::string* problem = nullptr);

/// Why "auto" leaves this process without the service ("" when it does not): a host that is PID
/// 1 or a child subreaper would adopt the service it starts, and a host that never waits for it
/// would keep its zombie.
std::string compile_service_auto_declined();

/// Whether this process orders its workers from the compile service: "on", or "auto" where
/// compile_service_auto_declined() says nothing. Never in a privileged process.
bool compile_service_requested();

/// The service socket for this user, this worker binary and this environment: processes that
/// would start identical workers share one service, and any difference (another binary, another
/// ROCm or CUDA, other compiler variables) gets its own. The Failure (BACKEND_UNAVAILABLE) says
/// why there is none (no private runtime directory, a path too long for a socket, an unreadable
/// binary).
Expected<std::string> compile_service_socket(const std::string& worker_path,
                                             const std::vector<std::string>& environment);

/// The pid of the compile service listening at `socket_path`, or -1 when none answers there.
pid_t compile_service_pid(const std::string& socket_path);

/// Orders one worker, starting the service (and waiting for it to listen) when none answers.
/// The Failure (BACKEND_UNAVAILABLE) says why the service cannot be used; the caller then spawns
/// its own worker.
Expected<ServiceWorker> order_service_worker(const std::string& worker_path,
                                             const service_wire::WorkerOrder& order);

}  // namespace hipacm::backend
