// SPDX-License-Identifier: MIT
// rank_services.cpp - stops the compile service that a rank of `hipacm warmup --mpi` started.
#include "tools/cluster/mpi/rank_services.h"

#include <dlfcn.h>
#include <fmt/core.h>
#include <hipacm/hipacm.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "hip_backend/pool/worker_locator.h"
#include "hip_backend/pool/worker_process.h"
#include "hip_backend/service/service_client.h"
#include "support/files/unique_fd.h"

namespace hipacm::cli {
namespace {

constexpr int kStopWaitMs = 10000;

// The worker binary the plugin orders with: found beside the loaded libhipacm, as the plugin
// finds it (this program links the plugin; hip_backend's own lookup would look beside us).
std::string plugin_worker() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&hipacm_get_provider), &info) == 0 || !info.dli_fname)
    return {};
  const std::string dir = std::filesystem::path(info.dli_fname).parent_path().string();
  const Expected<std::string> found = backend::find_worker_binary_beside(dir);
  return found ? found.value() : std::string();
}

int pidfd_of(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

bool pidfd_signal(int pidfd, int signal) {
#ifdef SYS_pidfd_send_signal
  return ::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0;
#else
  (void)pidfd;
  (void)signal;
  errno = ENOSYS;
  return false;
#endif
}

}  // namespace

RankServices::RankServices() {
  if (!backend::compile_service_requested()) return;
  const std::string worker = plugin_worker();
  if (worker.empty()) return;
  // The environment a worker order carries (TMPDIR, which the key leaves out, aside), as doctor
  // names the socket: the same key, so the same service the plugin would order from.
  const Expected<std::string> socket =
      backend::compile_service_socket(worker, backend::WorkerProcess::environment_for("/"));
  if (!socket) return;
  socket_ = socket.value();
  running_before_ = backend::compile_service_pid(socket_) > 0;
}

pid_t RankServices::stop_started() noexcept {
  try {
    if (socket_.empty() || running_before_) return -1;
    const pid_t pid = backend::compile_service_pid(socket_);
    if (pid <= 0) return -1;
    backend::UniqueFd pidfd(pidfd_of(pid));
    // Asked again once the pidfd is held: it then names the service still listening there, not
    // a process that took over its pid.
    if (!pidfd || backend::compile_service_pid(socket_) != pid ||
        !pidfd_signal(pidfd.get(), SIGTERM)) {
      fmt::print(stderr,
                 "hipacm: warning: could not stop the compile service (pid {}) at {}: {}; it "
                 "exits when idle\n",
                 pid, socket_, std::strerror(errno));
      return -1;
    }
    pollfd exited{pidfd.get(), POLLIN, 0};
    if (::poll(&exited, 1, kStopWaitMs) != 1)
      fmt::print(stderr,
                 "hipacm: warning: the compile service (pid {}) has not exited {} s after "
                 "SIGTERM\n",
                 pid, kStopWaitMs / 1000);
    return pid;
  } catch (...) {
    return -1;
  }
}

}  // namespace hipacm::cli
