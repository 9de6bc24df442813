// SPDX-License-Identifier: MIT
// worker_spawn.cpp - starting a worker: ordered from the compile service when that is in use,
// else posix_spawn'd here with its socket, output pipe, private TMPDIR and environment.
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "hip_backend/pool/worker_process.h"
#include "hip_backend/pool/worker_process_internal.h"
#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/process/close_other_descriptors.h"
#include "hip_backend/process/comgr_cache_policy.h"
#include "hip_backend/process/spawn_setup.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "support/c_strings.h"
#include "support/environment.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::backend {
namespace {

using worker_process_internal::errno_text;

// The worker's fixed descriptor for its socket (0-2 are stdio).
constexpr int kChildSocketFd = 3;

}  // namespace

std::vector<std::string> WorkerProcess::environment_for(const std::string& temp_dir) {
  std::vector<std::string> environment = worker_environment(temp_dir);
  apply_comgr_cache_policy(&environment, comgr_cache_chosen_by_user());
  return environment;
}

Expected<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const std::string& path,
                                                              const std::string& arch) {
  std::unique_ptr<WorkerProcess> worker;
  if (worker_process_internal::use_compile_service()) worker = order_from_service(path, arch);
  if (!worker) {
    Expected<std::unique_ptr<WorkerProcess>> spawned = spawn_registered(path);
    if (!spawned) return spawned;
    worker = std::move(spawned).value();
  }
  // After the registry's lock is gone: a host's log callback must not hold up fork().
  count(stats().worker_spawns);
  log(LogLevel::kInfo,
      "started hipacm-worker (pid " + std::to_string(worker->pid_) + "): " + worker->path_);
  return worker;
}

Expected<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn_registered(const std::string& path) {
  auto fail = [&](const std::string& what, int err) -> Failure {
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "cannot start hipacm-worker '" + path + "': " + what + ": " + errno_text(err)};
  };
  // Held until every descriptor made here is registered or closed: fork()
  // in another thread waits, so no child inherits a half-made worker.
  auto registry_lock = WorkerFdRegistry::lock();

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return fail("socketpair", errno);
  UniqueFd host_socket(sv[0]), child_socket(sv[1]);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return fail("pipe2", errno);
  UniqueFd stderr_read(pipe_fds[0]), stderr_write(pipe_fds[1]);
  if (!move_fd_above(child_socket, kChildSocketFd) ||
      !move_fd_above(stderr_write, kChildSocketFd)) {
    return fail("fcntl(F_DUPFD_CLOEXEC)", errno);
  }
  if (!set_nonblocking(host_socket.get()) || !set_nonblocking(stderr_read.get())) {
    return fail("fcntl(O_NONBLOCK)", errno);
  }

  // The worker's TMPDIR: comgr writes each request's source and headers
  // there, and a killed worker cannot clean up after itself.
  auto created = PrivateTempDir::create(PrivateTempDir::kWorkerPrefix);
  if (!created) {
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "cannot start hipacm-worker '" + path + "': " + created.failure().message};
  }
  std::unique_ptr<PrivateTempDir> temp_dir = std::move(created).value();
  const std::vector<std::string> env_strings = environment_for(temp_dir->path());
  std::vector<char*> envp = exec_strings(env_strings);

  SpawnSetup setup;
  if (!setup.ok()) return fail("posix_spawn setup", ENOMEM);
  // dup2 clears FD_CLOEXEC on the targets; every other descriptor is closed.
  bool ok =
      posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0) == 0 &&
      posix_spawn_file_actions_adddup2(setup.actions(), stderr_write.get(), 1) == 0 &&
      posix_spawn_file_actions_adddup2(setup.actions(), stderr_write.get(), 2) == 0 &&
      posix_spawn_file_actions_adddup2(setup.actions(), child_socket.get(), kChildSocketFd) == 0 &&
      add_close_above(setup.actions(), kChildSocketFd);
  ok = ok && posix_spawnattr_setpgroup(setup.attr(), 0) == 0 &&
       setup.default_signals(POSIX_SPAWN_SETPGROUP);
  if (!ok) return fail("posix_spawn setup", ENOMEM);

  const std::string fd_arg = std::to_string(kChildSocketFd);
  const std::string parent_arg = std::to_string(getpid());
  const char* argv[] = {path.c_str(),       "--fd",       fd_arg.c_str(),           "--parent-pid",
                        parent_arg.c_str(), "--temp-dir", temp_dir->path().c_str(), nullptr};
  pid_t pid = -1;
  // glibc's posix_spawn is a CLONE_VFORK + exec: safe in a multithreaded
  // host, and it reports exec failures (ENOENT, EACCES) as its result.
  const int rc = posix_spawn(&pid, path.c_str(), setup.actions(), setup.attr(),
                             const_cast<char* const*>(argv), envp.data());
  if (rc != 0) return fail("posix_spawn", rc);

  UniqueFd pidfd(open_pidfd(pid));
  WorkerFdRegistry::add_locked(host_socket.get());
  WorkerFdRegistry::add_locked(stderr_read.get());
  WorkerFdRegistry::add_locked(pidfd.get());
  // child_socket and stderr_write close here, still under the lock.
  return std::make_unique<WorkerProcess>(Key(), path, pid, std::move(host_socket),
                                         std::move(stderr_read), std::move(pidfd),
                                         std::move(temp_dir));
}

}  // namespace hipacm::backend
