// SPDX-License-Identifier: MIT
// worker_zygote.cpp - the compile service's new workers: forked while it has one thread, else
// spawned as `hipacm-worker --service-worker`, each with its host's ends and a line back.
#include "worker/service/worker_zygote.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/process/spawn_setup.h"
#include "support/c_strings.h"
#include "support/settings.h"
#include "worker/service/service_worker.h"

namespace hipacm::backend::service_internal {
namespace {

constexpr int kWorkerSocketFd = kServiceWorkerSocketFd;
constexpr int kWorkerChannelFd = kServiceWorkerChannelFd;

}  // namespace

Expected<void> make_worker_ends(UniqueFd* host_socket, UniqueFd* child_socket,
                                UniqueFd* output_read, UniqueFd* output_write) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "socketpair: " + errno_text()};
  }
  host_socket->reset(sv[0]);
  child_socket->reset(sv[1]);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "pipe2: " + errno_text()};
  }
  output_read->reset(pipe_fds[0]);
  output_write->reset(pipe_fds[1]);
  if (!move_fd_above(*child_socket, kWorkerChannelFd) ||
      !move_fd_above(*output_write, kWorkerChannelFd) || !set_nonblocking(host_socket->get()) ||
      !set_nonblocking(output_read->get())) {
    return Failure{HIPACM_ERROR_INTERNAL, "fcntl: " + errno_text()};
  }
  return {};
}

Zygote::Zygote()
    : can_fork_(settings::service_fork()),
      self_(std::filesystem::read_symlink("/proc/self/exe").string()) {}

Expected<pid_t> Zygote::start_worker(const sw::WorkerOrder& order, UniqueFd* host_socket,
                                     UniqueFd* output, UniqueFd* channel) {
  UniqueFd host, child, output_read, output_write;
  if (Expected<void> ends = make_worker_ends(&host, &child, &output_read, &output_write); !ends)
    return std::move(ends).failure();
  int lines[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, lines) != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "socketpair: " + errno_text()};
  }
  UniqueFd service_end(lines[0]), worker_end(lines[1]);
  if (!move_fd_above(worker_end, kWorkerChannelFd)) {
    return Failure{HIPACM_ERROR_INTERNAL, "fcntl: " + errno_text()};
  }
  if (!set_nonblocking(service_end.get())) {
    return Failure{HIPACM_ERROR_INTERNAL, "fcntl: " + errno_text()};
  }
  pid_t pid = -1;
  if (single_threaded()) {
    // The child is a whole copy of a warm compiler process.
    pid = ::fork();
    if (pid == 0) become_service_worker(order, child.get(), output_write.get(), worker_end.get());
    if (pid < 0) {
      return Failure{HIPACM_ERROR_INTERNAL, "fork: " + errno_text()};
    }
  } else {
    Expected<pid_t> spawned =
        spawn_worker(order, child.get(), output_write.get(), worker_end.get());
    if (!spawned) return spawned;
    pid = spawned.value();
  }
  *host_socket = std::move(host);
  *output = std::move(output_read);
  *channel = std::move(service_end);
  return pid;
}

bool Zygote::single_threaded() {
  std::error_code ec;
  std::size_t threads = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++threads;
  }
  if (ec || threads != 1) can_fork_ = false;  // a compiler's threads do not go away
  return can_fork_;
}

Expected<pid_t> Zygote::spawn_worker(const sw::WorkerOrder& order, int child_socket, int output,
                                     int channel) {
  SpawnSetup setup;
  posix_spawn_file_actions_t* actions = setup.actions();
  const bool ok = setup.ok() &&
                  posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDWR, 0) == 0 &&
                  posix_spawn_file_actions_adddup2(actions, output, 1) == 0 &&
                  posix_spawn_file_actions_adddup2(actions, output, 2) == 0 &&
                  posix_spawn_file_actions_adddup2(actions, child_socket, kWorkerSocketFd) == 0 &&
                  posix_spawn_file_actions_adddup2(actions, channel, kWorkerChannelFd) == 0 &&
                  posix_spawn_file_actions_addchdir_np(actions, order.cwd.c_str()) == 0 &&
                  setup.default_signals();
  std::vector<char*> envp = exec_strings(order.environment);
  const char* argv[] = {self_.c_str(), "--service-worker", order.temp_dir.c_str(), nullptr};
  pid_t pid = -1;
  // The service's other descriptors are all close-on-exec.
  const int rc = ok ? posix_spawn(&pid, self_.c_str(), actions, setup.attr(),
                                  const_cast<char* const*>(argv), envp.data())
                    : ENOMEM;
  if (rc != 0) {
    return Failure{HIPACM_ERROR_INTERNAL, "cannot start " + self_ + ": " + std::strerror(rc)};
  }
  return pid;
}

}  // namespace hipacm::backend::service_internal
