// SPDX-License-Identifier: MIT
// compile_service.cpp - the compile service's life: detach, listen, warm compilers, fork a
// worker per order, report how each ended, and exit once idle.
#include "hip_backend/worker/compile_service.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/target_arch.h"
#include "hip_backend/worker/private_temp_dir.h"
#include "hip_backend/worker/runtime_dir.h"
#include "hip_backend/worker/service_wire.h"
#include "hip_backend/worker/worker_protocol.h"
#include "hip_backend/worker/worker_session.h"
#include "support/environment.h"
#include "support/unique_fd.h"

extern char** environ;

namespace hipacm::backend {
namespace {

namespace sw = service_wire;
using Clock = std::chrono::steady_clock;

constexpr unsigned long kDefaultIdleMs = 5UL * 60 * 1000;
constexpr unsigned long kMaxIdleMs = 24UL * 3600 * 1000;
// An orderer writes its order right after connecting; one that stalls is dropped, not waited on.
constexpr int kOrderReadMs = 5000;
constexpr int kNoticeSendMs = 1000;
// More live orders than this from one user is a runaway host, not a workload.
constexpr std::size_t kMaxWorkers = 4096;
// The worker's fixed descriptors: stdin, stdout and stderr on its output pipe, its socket on 3.
constexpr int kWorkerSocketFd = 3;

constexpr char kWarmupSource[] =
    "extern \"C\" __global__ void hipacm_service_warmup(float* x) { x[0] = 1.0f; }\n";

std::string errno_text() { return std::strerror(errno); }

/// The compiler family an arch is compiled by: what one warm-up loads and initializes.
std::string compiler_family(const std::string& arch) {
  return is_nvidia_arch(arch) ? "nvrtc" : "hiprtc";
}

/// Moves fd above the worker's fixed descriptors, close-on-exec.
bool move_above_fixed(UniqueFd& fd) {
  if (fd.get() > kWorkerSocketFd) return true;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, kWorkerSocketFd + 1);
  if (moved < 0) return false;
  fd.reset(moved);
  return true;
}

void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  const long max = std::min<long>(::sysconf(_SC_OPEN_MAX), 65536);
  for (int fd = first; fd < max; ++fd) ::close(fd);
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

bool same_user(int connection) {
  ucred peer{};
  socklen_t size = sizeof peer;
  return ::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
         peer.uid == ::geteuid();
}

/// In the forked child, which is single-threaded: becomes the ordered worker. Never returns.
[[noreturn]] void become_worker(const sw::WorkerOrder& order, int child_socket, int output) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP}) std::signal(sig, SIG_DFL);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull < 0 || ::dup2(devnull, 0) < 0 || ::dup2(output, 1) < 0 || ::dup2(output, 2) < 0 ||
      ::dup2(child_socket, kWorkerSocketFd) < 0) {
    _exit(wire::kWorkerExitUsage);
  }
  close_from(kWorkerSocketFd + 1);
  // The orderer's environment, as a worker it spawned itself would have had.
  static std::vector<char*> entries;
  entries.clear();
  for (const std::string& entry : order.environment)
    entries.push_back(const_cast<char*>(entry.c_str()));
  entries.push_back(nullptr);
  environ = entries.data();
  if (::chdir(order.cwd.c_str()) != 0) {
    std::fprintf(stderr, "hipacm-worker: cannot enter the host's working directory %s: %s\n",
                 order.cwd.c_str(), errno_text().c_str());
    _exit(wire::kWorkerExitUsage);
  }
  _exit(run_worker_session(kWorkerSocketFd, 0, order.temp_dir));
}

class Service {
 public:
  Service(UniqueFd listener, std::string socket_path, std::string temp_dir)
      : socket_identity_(identity_of(socket_path)),
        listener_(std::move(listener)),
        socket_path_(std::move(socket_path)),
        lock_path_(socket_path_ + ".lock"),
        temp_dir_(std::move(temp_dir)),
        idle_(std::chrono::milliseconds(compile_service_idle_ms())) {}

  int run();

 private:
  struct Worker {
    pid_t pid = -1;
    UniqueFd connection;  ///< the order's connection: the exit notice goes here
  };

  void accept_orders();
  void handle_order(UniqueFd connection);
  pid_t fork_worker(const sw::WorkerOrder& order, UniqueFd* host_socket, UniqueFd* output,
                    std::string* why);
  void warm(const std::string& arch);
  /// Drains the signal descriptor and reaps; true when asked to stop.
  bool read_signals();
  void reap_children();
  void drop_connection(int fd);
  bool exit_if_still_idle();
  /// Removes the socket (if it is still ours) and the temp directory.
  void leave();

  struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const Identity&) const = default;
  };
  /// The socket file's identity: a listening socket's own fstat() names sockfs, not the file.
  static Identity identity_of(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return {};
    return {st.st_dev, st.st_ino};
  }

  const Identity socket_identity_;
  UniqueFd listener_;
  UniqueFd signals_;
  const std::string socket_path_;
  const std::string lock_path_;
  const std::string temp_dir_;
  const Clock::duration idle_;
  Clock::time_point last_activity_ = Clock::now();
  std::map<int, Worker> by_connection_;  ///< live order connections, by descriptor
  std::set<pid_t> children_;             ///< forked and not yet reaped
  std::set<std::string> warm_;           ///< compiler families loaded and run once
};

int Service::run() {
  // Signals arrive as data: children ending, and a request to stop (which leaves the workers
  // already handed out running; they are their hosts' now).
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&handled, sig);
  if (::sigprocmask(SIG_BLOCK, &handled, nullptr) != 0) return 1;
  signals_.reset(::signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signals_) return 1;
  std::signal(SIGPIPE, SIG_IGN);
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({listener_.get(), POLLIN, 0});
    fds.push_back({signals_.get(), POLLIN, 0});
    for (const auto& [fd, worker] : by_connection_) fds.push_back({fd, POLLIN, 0});
    int timeout = -1;
    if (by_connection_.empty() && children_.empty()) {
      const auto left = idle_ - (Clock::now() - last_activity_);
      timeout = static_cast<int>(
          std::max<long long>(0, std::chrono::ceil<std::chrono::milliseconds>(left).count()));
    }
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) return 1;
    if (n == 0) {
      if (exit_if_still_idle()) return 0;
      continue;
    }
    if (n < 0) continue;
    if (fds[1].revents != 0 && read_signals()) {
      leave();
      return 0;
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      // Anything from an orderer after its order, or its hang-up, ends its worker.
      if (fds[i].revents != 0) drop_connection(fds[i].fd);
    }
    if (fds[0].revents != 0) accept_orders();
  }
}

void Service::accept_orders() {
  for (;;) {
    UniqueFd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!connection) return;  // EAGAIN: no one else is waiting
    last_activity_ = Clock::now();
    if (!same_user(connection.get())) continue;  // closed unanswered
    handle_order(std::move(connection));
  }
}

void Service::handle_order(UniqueFd connection) {
  sw::Header header;
  std::vector<std::uint8_t> payload;
  std::vector<UniqueFd> unexpected;
  std::string why;
  sw::WorkerOrder order;
  sw::OrderReply reply;
  if (!sw::read_message(connection.get(), kOrderReadMs, &header, &payload, &unexpected, &why)) {
    return;  // nothing usable arrived: there is no one to answer
  }
  if (header.type != sw::MessageType::kOrder || !unexpected.empty()) {
    why = "expected a worker order";
  } else if (sw::decode_order(payload.data(), payload.size(), &order, &why)) {
    if (by_connection_.size() >= kMaxWorkers) {
      why = "the compile service already runs " + std::to_string(kMaxWorkers) + " workers";
    } else {
      warm(order.arch);
      UniqueFd host_socket, output;
      const pid_t pid = fork_worker(order, &host_socket, &output, &why);
      if (pid > 0) {
        UniqueFd pidfd(open_pidfd(pid));
        if (!pidfd) why = "pidfd_open: " + errno_text();
        reply.ok = pidfd.valid();
        reply.pid = pid;
        if (reply.ok) {
          const int handed[sw::kReplyDescriptors] = {host_socket.get(), output.get(), pidfd.get()};
          if (sw::send_message(connection.get(), sw::encode_reply(reply), handed,
                               sw::kReplyDescriptors, kNoticeSendMs, &why)) {
            const int fd = connection.get();
            by_connection_[fd] = Worker{pid, std::move(connection)};
            return;
          }
        }
        ::kill(pid, SIGKILL);  // never handed over: no one else can end it
        return;
      }
    }
  }
  reply.ok = false;
  reply.error = why;
  sw::send_message(connection.get(), sw::encode_reply(reply), nullptr, 0, kNoticeSendMs, &why);
}

pid_t Service::fork_worker(const sw::WorkerOrder& order, UniqueFd* host_socket, UniqueFd* output,
                           std::string* why) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *why = "socketpair: " + errno_text();
    return -1;
  }
  UniqueFd host(sv[0]), child(sv[1]);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *why = "pipe2: " + errno_text();
    return -1;
  }
  UniqueFd output_read(pipe_fds[0]), output_write(pipe_fds[1]);
  if (!move_above_fixed(child) || !move_above_fixed(output_write)) {
    *why = "fcntl: " + errno_text();
    return -1;
  }
  const int flags = ::fcntl(host.get(), F_GETFL);
  const int out_flags = ::fcntl(output_read.get(), F_GETFL);
  if (flags < 0 || out_flags < 0 || ::fcntl(host.get(), F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::fcntl(output_read.get(), F_SETFL, out_flags | O_NONBLOCK) != 0) {
    *why = "fcntl: " + errno_text();
    return -1;
  }
  // The service has one thread, so the child is a whole copy of a warm compiler process.
  const pid_t pid = ::fork();
  if (pid == 0) become_worker(order, child.get(), output_write.get());
  if (pid < 0) {
    *why = "fork: " + errno_text();
    return -1;
  }
  children_.insert(pid);
  *host_socket = std::move(host);
  *output = std::move(output_read);
  return pid;
}

void Service::warm(const std::string& arch) {
  const std::string family = compiler_family(arch);
  if (arch.empty() || warm_.count(family) != 0) return;
  warm_.insert(family);  // once, whatever the outcome: a compiler that fails to warm fails later
  CompileRequest request;
  request.source = kWarmupSource;
  request.source_name = "hipacm_service_warmup.hip";
  request.arch = arch;
  try {
    (void)compile_for_target(request);
  } catch (...) {
  }
  remove_directory_contents(temp_dir_);
}

bool Service::read_signals() {
  signalfd_siginfo info;
  bool stop = false;
  while (::read(signals_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    stop = stop || info.ssi_signo != SIGCHLD;
  }
  reap_children();
  return stop;
}

void Service::reap_children() {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    children_.erase(pid);
    last_activity_ = Clock::now();
    for (auto it = by_connection_.begin(); it != by_connection_.end(); ++it) {
      if (it->second.pid != pid) continue;
      std::string why;
      sw::send_message(it->first, sw::encode_exit({pid, status}), nullptr, 0, kNoticeSendMs, &why);
      by_connection_.erase(it);
      break;
    }
  }
}

void Service::drop_connection(int fd) {
  const auto it = by_connection_.find(fd);
  if (it == by_connection_.end()) return;
  // Still our unreaped child, so the pid cannot name anyone else yet.
  if (children_.count(it->second.pid) != 0) ::kill(it->second.pid, SIGKILL);
  by_connection_.erase(it);
  last_activity_ = Clock::now();
}

bool Service::exit_if_still_idle() {
  // No one can reach a service whose socket is gone or was taken over: it just leaves.
  const bool reachable = socket_identity_.ino != 0 && identity_of(socket_path_) == socket_identity_;
  // A starter holds the lock while it connects: never vanish under it.
  UniqueFd lock(::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (reachable && (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0)) {
    last_activity_ = Clock::now();
    return false;
  }
  pollfd pending{listener_.get(), POLLIN, 0};
  if (reachable && ::poll(&pending, 1, 0) > 0) return false;  // an order waits: serve it first
  leave();
  return true;
}

void Service::leave() {
  // Only our own socket: a newer service may have taken the name.
  if (socket_identity_.ino != 0 && identity_of(socket_path_) == socket_identity_) {
    ::unlink(socket_path_.c_str());
  }
  listener_.reset();
  remove_directory_tree(temp_dir_);
}

/// Binds and listens on `path` (mode 0600 in the private runtime directory).
UniqueFd listen_at(const std::string& path, std::string* why) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    *why = "socket path " + path + " is too long";
    return UniqueFd();
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) {
    *why = "socket: " + errno_text();
    return UniqueFd();
  }
  ::unlink(path.c_str());  // a dead service's socket; the starter holds the start lock
  const mode_t old_mask = ::umask(077);
  const int bound = ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::listen(listener.get(), 128) != 0) {
    *why = "cannot listen on " + path + ": " + errno_text();
    return UniqueFd();
  }
  return listener;
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

unsigned long compile_service_idle_ms() {
  unsigned long ms = kDefaultIdleMs;
  if (const auto text = environment_value("HIPACM_SERVICE_IDLE_MS")) {
    unsigned long value = 0;
    const char* end = text->data() + text->size();
    const auto [ptr, ec] = std::from_chars(text->data(), end, value);
    if (ec == std::errc() && ptr == end) ms = std::min(value, kMaxIdleMs);
  }
  return ms;
}

int run_compile_service(const std::string& socket_path) {
  std::string why;
  if (socket_path.empty() || socket_path.front() != '/' ||
      !make_private_directory(parent_dir(socket_path), &why)) {
    std::fprintf(stderr, "hipacm-worker: compile service: %s\n",
                 why.empty() ? "the socket path must be absolute" : why.c_str());
    return 1;
  }
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return 1;
  UniqueFd ready_read(ready[0]), ready_write(ready[1]);
  const pid_t pid = ::fork();
  if (pid < 0) return 1;
  if (pid > 0) {
    // The starter: report whether the service listens, then leave it to its own session.
    ready_write.reset();
    char message[512] = {};
    ssize_t n;
    do {
      n = ::read(ready_read.get(), message, sizeof message - 1);
    } while (n < 0 && errno == EINTR);
    if (n == 1 && message[0] == '+') return 0;
    std::fprintf(stderr, "hipacm-worker: compile service: %s\n",
                 n > 0 ? message : "it ended before it listened");
    return 1;
  }
  ready_read.reset();
  ::setsid();
  if (::chdir("/") != 0) return 1;
  auto report = [&](const std::string& text) {
    [[maybe_unused]] const ssize_t w = ::write(ready_write.get(), text.data(), text.size());
  };
  // Compilers write their temporary files here, not in the starter's TMPDIR.
  const std::string temp_dir = socket_path + ".tmp";
  if (!make_private_directory(temp_dir, &why)) {
    report(why);
    return 1;
  }
  ::setenv("TMPDIR", temp_dir.c_str(), 1);
  UniqueFd listener = listen_at(socket_path, &why);
  if (!listener) {
    report(why);
    return 1;
  }
  report("+");
  ready_write.reset();
  Service service(std::move(listener), socket_path, temp_dir);
  return service.run();
}

}  // namespace hipacm::backend
