// SPDX-License-Identifier: MIT
// worker_process.cpp - one worker's lifetime on the host side: its ownership across fork(),
// its end (closed, handed back to the compile service, or killed), and its reaping.
#include "hip_backend/pool/worker_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "hip_backend/pool/worker_process_internal.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "hip_backend/protocol/service_wire.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "support/log.h"

namespace hipacm::backend {
namespace {

/// "killed by signal 11 (Segmentation fault)" or "exited with code 7".
std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    std::string text =
        "was killed by signal " + std::to_string(sig) + " (" + (name ? name : "unknown") + ")";
    if (WCOREDUMP(status)) text += ", core dumped";
    return text;
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    std::string text = "exited with code " + std::to_string(code);
    if (code == wire::kWorkerExitProtocolError) text += " (it could not read the host's request)";
    if (code == wire::kWorkerExitUsage) text += " (bad command line or fault spec)";
    return text;
  }
  return "stopped with wait status " + std::to_string(status);
}

}  // namespace

WorkerProcess::WorkerProcess(Key, std::string path, pid_t pid, UniqueFd socket,
                             UniqueFd stderr_pipe, UniqueFd pidfd,
                             std::unique_ptr<PrivateTempDir> temp_dir, UniqueFd service_control)
    : path_(std::move(path)),
      pid_(pid),
      owner_pid_(getpid()),
      socket_(std::move(socket)),
      stderr_pipe_(std::move(stderr_pipe)),
      pidfd_(std::move(pidfd)),
      service_control_(std::move(service_control)),
      temp_dir_(std::move(temp_dir)) {}

WorkerProcess::~WorkerProcess() {
  if (owner_pid_ != getpid()) {
    // A fork()ed child: the registry's child handler already closed these
    // descriptors (their numbers may be reused by now), and the worker is the
    // parent's child, not ours, to signal or wait for.
    socket_.release();
    stderr_pipe_.release();
    pidfd_.release();
    service_control_.release();
    if (temp_dir_) temp_dir_->release();  // the parent's worker still uses it
    return;
  }
  WorkerFdRegistry::close(socket_);  // EOF: the worker's cue to exit 0
  bool given_back = false;
  if (service_control_ && usable_ && !reaped_) {
    // A worker of the compile service goes back to it, warm, for the next process: closing the
    // order's connection hands it back. It no longer uses our temp dir.
    WorkerFdRegistry::close(service_control_);
    reaped_ = true;
    given_back = true;
  }
  if (!reaped_) reap(kGracefulExitMs);
  WorkerFdRegistry::close(stderr_pipe_);
  WorkerFdRegistry::close(pidfd_);
  if (service_control_) WorkerFdRegistry::close(service_control_);
  remove_temp_dir();
  // A worker that failed has had its warning; one that served to the end retires quietly.
  if (given_back) {
    log(LogLevel::kDebug,
        "hipacm-worker (pid " + std::to_string(pid_) + ") went back to the compile service");
  } else if (!failure_logged_) {
    log(LogLevel::kDebug,
        "hipacm-worker (pid " + std::to_string(pid_) + ") retired: it " + describe_exit());
  }
}

void WorkerProcess::signal_kill() {
  if (reaped_) return;  // the pid may already belong to someone else
#ifdef SYS_pidfd_send_signal
  if (pidfd_ && syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0) == 0) return;
#endif
  ::kill(pid_, SIGKILL);
}

void WorkerProcess::remove_temp_dir() {
  // Only once the worker is gone does nothing write there any more.
  if (reaped_) temp_dir_.reset();
}

void WorkerProcess::reap(int grace_ms) {
  if (reaped_) return;
  if (service_control_) {
    reap_service_worker(grace_ms);
    return;
  }
  auto try_wait = [this](int options) {
    int status = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &status, options);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) {
      wait_status_ = status;
      status_known_ = true;
    }
    // ECHILD: the host ignores SIGCHLD or another waitpid(-1) took it. Either
    // way it is gone and its status is lost.
    if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
    return reaped_;
  };
  if (pidfd_) {
    // The pidfd turns readable when the process exits: a timed wait without
    // polling loops.
    pollfd p{pidfd_.get(), POLLIN, 0};
    const Deadline deadline(static_cast<std::uint32_t>(grace_ms));
    while (poll(&p, 1, deadline.poll_timeout()) < 0 && errno == EINTR) {
    }
    if (try_wait(WNOHANG)) return;
  } else {
    const Deadline deadline(static_cast<std::uint32_t>(grace_ms));
    while (!try_wait(WNOHANG) && !deadline.passed()) {
      const timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
    if (reaped_) return;
  }
  signal_kill();
  try_wait(0);
}

void WorkerProcess::reap_service_worker(int grace_ms) {
  auto ended_within = [this](int ms) {
    pollfd p{pidfd_.get(), POLLIN, 0};
    int n;
    do {
      n = poll(&p, 1, ms);
    } while (n < 0 && errno == EINTR);
    return n > 0;
  };
  if (!ended_within(grace_ms)) {
    signal_kill();
    ended_within(kGracefulExitMs);
  }
  // The service sends the status once it has reaped the worker; without the notice the worker
  // has still ended (the pidfd said so) or the service will kill it when this connection closes.
  service_wire::Header header;
  std::vector<std::uint8_t> payload;
  std::vector<UniqueFd> unexpected;
  if (service_wire::read_message(service_control_.get(), kGracefulExitMs, &header, &payload,
                                 &unexpected) &&
      header.type == service_wire::MessageType::kExit && unexpected.empty()) {
    const Expected<service_wire::ExitNotice> notice =
        service_wire::decode_exit(payload.data(), payload.size());
    if (notice && notice->pid == pid_) {
      wait_status_ = notice->wait_status;
      status_known_ = true;
    }
  }
  reaped_ = true;
  WorkerFdRegistry::close(service_control_);
}

std::string WorkerProcess::describe_exit() const {
  if (status_known_) return describe_wait_status(wait_status_);
  return "exited (its exit status was collected elsewhere: is SIGCHLD ignored?)";
}

}  // namespace hipacm::backend
