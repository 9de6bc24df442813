// SPDX-License-Identifier: MIT
// worker_process.cpp - spawns, talks to, times out and reaps one hipacm-worker process.
#include "hip_backend/pool/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/process/comgr_cache_policy.h"
#include "hip_backend/process/spawn_setup.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "hip_backend/service/service_client.h"
#include "support/environment.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::backend {
namespace {

// Set once the compile service failed this process; it spawns its own workers from then on.
std::atomic<bool> service_given_up{false};
// Set once an unknown $HIPACM_COMPILE_SERVICE value was reported.
std::atomic<bool> service_setting_reported{false};

/// Whether to order from the service; an unknown setting is said once, and reads as off.
bool use_compile_service() {
  std::string problem;
  compile_service_setting(&problem);
  if (!problem.empty() && !service_setting_reported.exchange(true, std::memory_order_relaxed))
    log(LogLevel::kWarning, problem);
  return compile_service_requested() && !service_given_up.load(std::memory_order_acquire);
}

// The worker's fixed descriptor for its socket (0-2 are stdio).
constexpr int kChildSocketFd = 3;

std::string errno_text(int err) { return std::strerror(err); }

/// Closes, in the child, every descriptor above the fixed ones. glibc 2.34+
/// has closefrom as a file action; older glibc gets one close action per
/// descriptor that is open now (a descriptor opened concurrently by another
/// thread without O_CLOEXEC could slip through there; that is the host's bug).
bool add_close_others(posix_spawn_file_actions_t* actions) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  return posix_spawn_file_actions_addclosefrom_np(actions, kChildSocketFd + 1) == 0;
#else
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return false;
  const int own = dirfd(dir);
  bool ok = true;
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd > kChildSocketFd && fd != own) {
      ok = ok && posix_spawn_file_actions_addclose(actions, fd) == 0;
    }
  }
  closedir(dir);
  return ok;
#endif
}

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

/// A point in time to give up at; `none` means wait forever.
struct WorkerProcess::Deadline {
  using Clock = std::chrono::steady_clock;
  bool none = true;
  Clock::time_point at;

  explicit Deadline(std::uint32_t timeout_ms)
      : none(timeout_ms == 0), at(Clock::now() + std::chrono::milliseconds(timeout_ms)) {}

  /// A poll() timeout: -1 for none, else the milliseconds left, rounded up.
  int poll_timeout() const {
    if (none) return -1;
    const auto left = at - Clock::now();
    if (left <= Clock::duration::zero()) return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<int>(std::min<long long>(ms, std::numeric_limits<int>::max()));
  }
  bool passed() const { return !none && Clock::now() >= at; }
};

std::vector<std::string> WorkerProcess::environment_for(const std::string& temp_dir) {
  std::vector<std::string> environment = worker_environment(temp_dir);
  apply_comgr_cache_policy(&environment, comgr_cache_chosen_by_user());
  return environment;
}

std::unique_ptr<WorkerProcess> WorkerProcess::spawn(const std::string& path, std::string* error,
                                                    const std::string& arch) {
  std::unique_ptr<WorkerProcess> worker;
  if (use_compile_service()) worker = order_from_service(path, arch);
  if (!worker) worker = spawn_registered(path, error);
  // After the registry's lock is gone: a host's log callback must not hold up fork().
  if (worker) {
    count(stats().worker_spawns);
    log(LogLevel::kInfo,
        "started hipacm-worker (pid " + std::to_string(worker->pid_) + "): " + worker->path_);
  }
  return worker;
}

std::unique_ptr<WorkerProcess> WorkerProcess::spawn_registered(const std::string& path,
                                                               std::string* error) {
  auto fail = [&](const std::string& what, int err) -> std::unique_ptr<WorkerProcess> {
    if (error)
      *error = "cannot start hipacm-worker '" + path + "': " + what + ": " + errno_text(err);
    return nullptr;
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
  std::string temp_error;
  auto temp_dir = PrivateTempDir::create(PrivateTempDir::kWorkerPrefix, &temp_error);
  if (!temp_dir) {
    if (error) *error = "cannot start hipacm-worker '" + path + "': " + temp_error;
    return nullptr;
  }
  const std::vector<std::string> env_strings = environment_for(temp_dir->path());
  std::vector<char*> envp = spawn_environment(env_strings);

  SpawnSetup setup;
  if (!setup.ok()) return fail("posix_spawn setup", ENOMEM);
  // dup2 clears FD_CLOEXEC on the targets; every other descriptor is closed.
  bool ok =
      posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0) == 0 &&
      posix_spawn_file_actions_adddup2(setup.actions(), stderr_write.get(), 1) == 0 &&
      posix_spawn_file_actions_adddup2(setup.actions(), stderr_write.get(), 2) == 0 &&
      posix_spawn_file_actions_adddup2(setup.actions(), child_socket.get(), kChildSocketFd) == 0 &&
      add_close_others(setup.actions());
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

std::unique_ptr<WorkerProcess> WorkerProcess::order_from_service(const std::string& path,
                                                                 const std::string& arch) {
  std::string why;
  // Two tries: a service that was exiting for idleness as we connected gives way to a new one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto temp_dir = PrivateTempDir::create(PrivateTempDir::kWorkerPrefix, &why);
    char cwd[4096];
    if (!temp_dir) break;
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      // A removed working directory (ENOENT) or one too long to name: a worker of our own starts
      // in it all the same, one from the service could not be sent there.
      why = "the working directory cannot be read: " + errno_text(errno);
      break;
    }
    service_wire::WorkerOrder order;
    order.arch = arch;
    order.cwd = cwd;
    order.temp_dir = temp_dir->path();
    order.environment = environment_for(temp_dir->path());
    order.limits = capture_host_limits();  // this thread's, as a worker it spawned would inherit
    std::optional<ServiceWorker> ordered = order_service_worker(path, order, &why);
    if (ordered) {
      return std::make_unique<WorkerProcess>(Key(), path, ordered->pid, std::move(ordered->socket),
                                             std::move(ordered->output), std::move(ordered->pidfd),
                                             std::move(temp_dir), std::move(ordered->control));
    }
  }
  // Said once, by whichever thread gave up first.
  if (!service_given_up.exchange(true, std::memory_order_acq_rel)) {
    // Asked for by name it is a warning; by default (auto) a note, since nothing was asked.
    const LogLevel level = compile_service_setting() == CompileServiceSetting::kOn
                               ? LogLevel::kWarning
                               : LogLevel::kInfo;
    log(level, "the compile service cannot be used (" + why +
                   "); this process starts its own hipacm-workers from now on");
  }
  return nullptr;
}

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

void WorkerProcess::drain_stderr() {
  if (!stderr_pipe_) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(stderr_pipe_.get(), buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<std::size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      }
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n == 0) WorkerFdRegistry::close(stderr_pipe_);  // every writer is gone
      return;                                             // EOF, EAGAIN or an error
    }
  }
}

WorkerProcess::Io WorkerProcess::wait_ready(short events, const Deadline& deadline) {
  for (;;) {
    pollfd fds[2] = {{socket_.get(), events, 0}, {stderr_pipe_.get(), POLLIN, 0}};
    const nfds_t count = stderr_pipe_ ? 2 : 1;
    const int n = poll(fds, count, deadline.poll_timeout());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Io::kError;
    }
    if (n == 0) return Io::kTimeout;
    if (count == 2 && fds[1].revents != 0) drain_stderr();
    // Readiness, hang-up and errors all go back to send/recv, which tell them apart.
    if (fds[0].revents != 0) return Io::kReady;
    if (deadline.passed()) return Io::kTimeout;
  }
}

WorkerProcess::Io WorkerProcess::send_all(const std::vector<std::uint8_t>& bytes,
                                          const Deadline& deadline) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(socket_.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const Io io = wait_ready(POLLOUT, deadline); io != Io::kReady) return io;
    } else if (errno == EPIPE || errno == ECONNRESET) {
      return Io::kClosed;
    } else if (errno != EINTR) {
      return Io::kError;
    }
  }
  return Io::kReady;
}

WorkerProcess::Io WorkerProcess::recv_exact(std::uint8_t* buf, std::size_t size,
                                            const Deadline& deadline) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::recv(socket_.get(), buf + got, size - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0 || errno == ECONNRESET) {
      return Io::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (const Io io = wait_ready(POLLIN, deadline); io != Io::kReady) return io;
    } else if (errno != EINTR) {
      return Io::kError;
    }
  }
  return Io::kReady;
}

WorkerProcess::Io WorkerProcess::recv_frame(wire::FrameHeader* header,
                                            std::vector<std::uint8_t>* payload,
                                            const Deadline& deadline, std::string* why) {
  // The socket as the protocol's byte source: each fill polls until the deadline.
  class Source final : public wire::ByteSource {
   public:
    Source(WorkerProcess& worker, const Deadline& deadline)
        : worker_(worker), deadline_(deadline) {}
    bool fill(std::uint8_t* buffer, std::size_t size) override {
      io_ = worker_.recv_exact(buffer, size, deadline_);
      return io_ == Io::kReady;
    }
    Io io() const { return io_; }

   private:
    WorkerProcess& worker_;
    const Deadline& deadline_;
    Io io_ = Io::kReady;
  };
  Source source(*this, deadline);
  if (wire::read_frame_from(source, header, payload, why) == wire::FrameRead::kBadHeader)
    return Io::kError;
  return source.io();
}

CompileResult WorkerProcess::compile(const CompileRequest& request, std::uint32_t timeout_ms) {
  if (!usable_) return fail(HIPACM_ERROR_COMPILER_CRASHED, "hipacm-worker is no longer usable");
  const std::uint32_t id = ++next_request_id_;
  std::vector<std::uint8_t> frame;
  std::string why;
  if (!wire::encode_request_frame(id, request, &frame, &why)) {
    CompileResult result;  // nothing was sent: the worker stays usable
    result.status = HIPACM_ERROR_INVALID_ARGUMENT;
    result.error_message = "request for " + request.source_name + " cannot be sent: " + why;
    return result;
  }
  const Deadline deadline(timeout_ms);
  // Unusable until a valid response arrives: if an exception (bad_alloc)
  // escapes mid-request, the stream is out of step and the worker must go.
  usable_ = false;
  Io io = send_all(frame, deadline);
  wire::FrameHeader header;
  if (io == Io::kReady) io = recv_frame(&header, &frame, deadline, &why);

  CompileResult result;
  if (io == Io::kReady && wire::decode_result_frame(header, frame, &result, &why)) {
    if (header.request_id == id) {
      usable_ = true;
      return result;
    }
    why = "a response to request " + std::to_string(header.request_id) + " instead of " +
          std::to_string(id);
    io = Io::kError;
  }
  const std::string what = "while compiling " + request.source_name;
  std::string summary;
  hipacm_status status = HIPACM_ERROR_COMPILER_CRASHED;
  switch (io) {
    case Io::kTimeout:
      signal_kill();
      status = HIPACM_ERROR_TIMEOUT;
      summary = "compile of " + request.source_name + " timed out after " +
                std::to_string(timeout_ms) + " ms; hipacm-worker (pid " + std::to_string(pid_) +
                ") was killed";
      break;
    case Io::kClosed:
      reap(kGracefulExitMs);  // it closed the socket: it is exiting or dead
      summary = "hipacm-worker (pid " + std::to_string(pid_) + ") " + describe_exit() + " " + what;
      break;
    default:
      if (why.empty()) why = "socket error: " + errno_text(errno);
      signal_kill();
      summary = "hipacm-worker (pid " + std::to_string(pid_) + ") sent an invalid response " +
                what + " (" + why + "); it was killed";
      break;
  }
  // Counted and logged here, in the host: the worker's own log went down with it.
  count(status == HIPACM_ERROR_TIMEOUT ? stats().timeouts : stats().worker_crashes);
  log(LogLevel::kWarning, summary);
  failure_logged_ = true;
  return fail(status, summary);
}

bool WorkerProcess::probe_idle() {
  if (!usable_) return false;
  pollfd fds[2] = {{socket_.get(), POLLIN, 0}, {stderr_pipe_.get(), POLLIN, 0}};
  const nfds_t count = stderr_pipe_ ? 2 : 1;
  int n;
  do {
    n = poll(fds, count, 0);
  } while (n < 0 && errno == EINTR);
  if (count == 2 && fds[1].revents != 0) drain_stderr();
  // An idle worker has nothing to say: readable means EOF (death) or junk.
  if (n < 0 || fds[0].revents != 0) {
    usable_ = false;
    signal_kill();
    reap(kGracefulExitMs);  // killed just now, if it was not dead already: quick
    log(LogLevel::kWarning, "idle hipacm-worker (pid " + std::to_string(pid_) + ") " +
                                describe_exit() + "; another takes its place");
    failure_logged_ = true;
    return false;
  }
  return true;
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
  std::string why;
  service_wire::ExitNotice notice;
  if (service_wire::read_message(service_control_.get(), kGracefulExitMs, &header, &payload,
                                 &unexpected, &why) &&
      header.type == service_wire::MessageType::kExit && unexpected.empty() &&
      service_wire::decode_exit(payload.data(), payload.size(), &notice, &why) &&
      notice.pid == pid_) {
    wait_status_ = notice.wait_status;
    status_known_ = true;
  }
  reaped_ = true;
  WorkerFdRegistry::close(service_control_);
}

std::string WorkerProcess::describe_exit() const {
  if (status_known_) return describe_wait_status(wait_status_);
  return "exited (its exit status was collected elsewhere: is SIGCHLD ignored?)";
}

CompileResult WorkerProcess::fail(hipacm_status status, const std::string& summary) {
  usable_ = false;
  reap(kGracefulExitMs);
  drain_stderr();  // after death: everything it wrote is in the pipe now
  // A killed compile's source and headers go now, not when the pool lets go
  // of this object.
  remove_temp_dir();
  CompileResult result;
  result.status = status;
  result.error_message = summary;
  std::string tail = stderr_tail_;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (!tail.empty()) result.error_message += "; its output ended with:\n" + tail;
  return result;
}

}  // namespace hipacm::backend
