// SPDX-License-Identifier: MIT
// compile_service.cpp - the compile service's life: detach, listen, warm compilers, hand out
// workers (waiting ones first, else forked or spawned), report how each ended, exit once idle.
#include "worker/service/compile_service.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/machine/runtime_dir.h"
#include "hip_backend/process/child_descriptors.h"
#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/process/spawn_setup.h"
#include "hip_backend/process/warmup_kernel.h"
#include "hip_backend/protocol/service_wire.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "hip_backend/service/service_start_lock.h"
#include "hip_backend/target_arch.h"
#include "support/environment.h"
#include "support/unique_fd.h"
#include "worker/service/service_worker.h"

namespace hipacm::backend {
namespace {

namespace sw = service_wire;
using Clock = std::chrono::steady_clock;

constexpr unsigned long kDefaultIdleMs = 5UL * 60 * 1000;
constexpr unsigned long kMaxIdleMs = 24UL * 3600 * 1000;
// An orderer writes its order right after connecting; one that stalls is dropped, not waited on.
// Each connection has its own deadline, and orders are read side by side: idle connections never
// add up to a delay for anyone else's order.
constexpr int kOrderReadMs = 5000;
// Connections whose order has not arrived yet; beyond this the oldest is dropped. More than a
// burst of real hosts, few enough that a flood of idle connections costs nothing.
constexpr std::size_t kMaxPendingOrders = 64;
constexpr int kNoticeSendMs = 1000;
// More live orders than this from one user is a runaway host, not a workload.
constexpr std::size_t kMaxWorkers = 4096;
constexpr int kWorkerSocketFd = kServiceWorkerSocketFd;
constexpr int kWorkerChannelFd = kServiceWorkerChannelFd;
// A released worker that is still compiling (its host died or gave up on it) has this long to
// come back before it is killed.
constexpr int kReleaseGraceMs = 2000;
// How long the waiting workers of a leaving service have to exit before they are killed.
constexpr int kStockExitGraceMs = 1000;
// How often an idle service checks that its socket still leads to it.
constexpr std::chrono::seconds kReachableCheck{1};

std::string errno_text() { return std::strerror(errno); }

/// The compiler family an arch is compiled by: what one warm-up loads and initializes.
std::string compiler_family(const std::string& arch) {
  return is_nvidia_arch(arch) ? "nvrtc" : "hiprtc";
}

bool same_user(int connection) {
  ucred peer{};
  socklen_t size = sizeof peer;
  return ::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
         peer.uid == ::geteuid();
}

class Service {
 public:
  Service(UniqueFd listener, std::string socket_path, std::string temp_dir)
      : socket_identity_(identity_of(socket_path)),
        listener_(std::move(listener)),
        socket_path_(std::move(socket_path)),
        lock_path_(socket_path_ + ".lock"),
        temp_dir_(std::move(temp_dir)),
        idle_(std::chrono::milliseconds(compile_service_idle_ms())),
        max_stock_(stock_limit()) {}

  int run();

 private:
  /// A worker that a host holds.
  struct Handed {
    UniqueFd connection;  ///< the order's connection: the exit notice goes here; closed = released
    UniqueFd channel;     ///< the worker's line back to the service
    std::set<std::string> warm;  ///< compiler families warm in it
    bool idle = false;           ///< it said its host's socket closed
    Clock::time_point kill_at;   ///< released while busy: killed unless idle by then
  };
  /// A warm worker waiting for its next host.
  struct Stocked {
    pid_t pid = -1;
    UniqueFd channel;
    std::set<std::string> warm;
  };
  /// A connection whose order is still arriving.
  struct PendingOrder {
    UniqueFd connection;
    sw::MessageReader reader;
    Clock::time_point deadline;  ///< dropped unanswered if the order is not whole by then
  };
  enum class Source {
    kListener,
    kSignals,
    kConnection,
    kHandedChannel,
    kStockChannel,
    kPendingOrder
  };

  static unsigned stock_limit() {
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    return static_cast<unsigned>(std::clamp<long>(cpus, 1, 256));
  }

  void accept_orders();
  /// Reads what the pending connection `fd` sent; a whole order is handled, a bad one dropped.
  void read_order(int fd);
  /// Drops pending connections whose deadline passed; returns the earliest deadline left.
  std::optional<Clock::time_point> drop_overdue_orders();
  void handle_order(UniqueFd connection, sw::MessageReader& reader);
  /// A worker set up for `order`: from the stock when one there has the order's compiler warm,
  /// else forked. Its host ends go to *host_socket and *output.
  pid_t provide_worker(const sw::WorkerOrder& order, UniqueFd* host_socket, UniqueFd* output,
                       UniqueFd* channel, std::set<std::string>* warm, std::string* why);
  /// A new worker: forked from the service while the service is single-threaded, else spawned
  /// from the service's own binary (a compiler that started threads cannot be forked safely, and
  /// a forked copy of it runs without them).
  pid_t fork_worker(const sw::WorkerOrder& order, UniqueFd* host_socket, UniqueFd* output,
                    UniqueFd* channel, std::string* why);
  pid_t spawn_worker(const sw::WorkerOrder& order, int child_socket, int output, int channel,
                     std::string* why);
  /// Whether the service still has its one thread (once not, never again).
  bool single_threaded();
  void warm(const std::string& arch);
  /// Drains the signal descriptor and reaps; true when asked to stop.
  bool read_signals();
  void reap_children();
  void released(pid_t pid);
  void heard_from(pid_t pid);
  void to_stock(pid_t pid);
  void kill_overdue();
  bool exit_if_still_idle();
  /// Whether its socket still names the one it listens on (not removed, not taken over).
  bool reachable() const;
  /// Removes the socket (if it is still ours) and the temp directory; stocked workers go.
  void leave();
  /// Removes what the service owns: its socket (if still its own), its temp dir, and, when
  /// `start_lock` holds it, the start lock's file.
  void leave(const UniqueFd& start_lock);

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
  const unsigned max_stock_;
  Clock::time_point last_activity_ = Clock::now();
  std::map<pid_t, Handed> handed_;
  std::map<int, PendingOrder> pending_;  ///< by descriptor
  std::vector<Stocked> stock_;           ///< most recently used last
  std::set<std::string> warm_;           ///< compiler families loaded and run once in the service
  /// What a worker forked now starts with; one that took on other limits is its host's alone.
  const HostLimits own_limits_ = capture_host_limits();
  std::set<pid_t> bound_to_host_;  ///< handed workers that took on limits other than the above
  /// $HIPACM_SERVICE_FORK=off: always spawn.
  bool can_fork_ = environment_value("HIPACM_SERVICE_FORK") != "off";
  const std::string self_ = std::filesystem::read_symlink("/proc/self/exe").string();
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
    std::vector<std::pair<Source, pid_t>> sources;
    auto watch = [&](int fd, Source source, pid_t pid) {
      fds.push_back({fd, POLLIN, 0});
      sources.emplace_back(source, pid);
    };
    watch(listener_.get(), Source::kListener, 0);
    watch(signals_.get(), Source::kSignals, 0);
    std::optional<Clock::time_point> wake;
    for (const auto& [pid, worker] : handed_) {
      if (worker.connection) watch(worker.connection.get(), Source::kConnection, pid);
      if (worker.channel && !worker.idle) watch(worker.channel.get(), Source::kHandedChannel, pid);
      if (!worker.connection && (!wake || worker.kill_at < *wake)) wake = worker.kill_at;
    }
    for (const Stocked& worker : stock_)
      watch(worker.channel.get(), Source::kStockChannel, worker.pid);
    // Idle, it also looks at its socket now and then: a runtime directory that was removed (a
    // session's XDG_RUNTIME_DIR at logout, a test's temporary one) leaves no one to serve.
    if (handed_.empty()) wake = std::min(last_activity_ + idle_, Clock::now() + kReachableCheck);
    if (const auto first = drop_overdue_orders()) wake = wake ? std::min(*wake, *first) : *first;
    for (const auto& [fd, order] : pending_) watch(fd, Source::kPendingOrder, fd);
    int timeout = -1;
    if (wake) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now()).count();
      timeout = static_cast<int>(std::clamp<long long>(left, 0, 24LL * 3600 * 1000));
    }
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) return 1;
    kill_overdue();  // every turn: a busy service may never time out
    if (n == 0) {
      const bool done = Clock::now() >= last_activity_ + idle_ || !reachable();
      if (handed_.empty() && pending_.empty() && done && exit_if_still_idle()) return 0;
      continue;
    }
    if (n < 0) continue;
    // New orders last: workers that came back in this turn serve them.
    for (std::size_t turn = 1; turn <= fds.size(); ++turn) {
      const std::size_t i = turn % fds.size();
      if (fds[i].revents == 0) continue;
      const auto [source, pid] = sources[i];
      switch (source) {
        case Source::kListener:
          accept_orders();
          break;
        case Source::kSignals:
          if (read_signals()) {
            leave();
            return 0;
          }
          break;
        case Source::kConnection:
          released(pid);  // the host let go of the worker, or died
          break;
        case Source::kHandedChannel:
          heard_from(pid);
          break;
        case Source::kPendingOrder:
          read_order(pid);  // `pid` holds the descriptor
          break;
        case Source::kStockChannel:
          // A waiting worker has nothing to say: it died or misbehaved. Either way it goes.
          for (auto it = stock_.begin(); it != stock_.end(); ++it) {
            if (it->pid != pid) continue;
            ::kill(pid, SIGKILL);  // unreaped, so still ours
            stock_.erase(it);
            break;
          }
          break;
      }
    }
  }
}

void Service::accept_orders() {
  for (;;) {
    UniqueFd connection(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!connection) return;  // EAGAIN: no one else is waiting
    last_activity_ = Clock::now();
    if (!same_user(connection.get())) continue;  // closed unanswered
    if (pending_.size() >= kMaxPendingOrders) {
      // The oldest (earliest deadline) goes unanswered: a real host sends its order at once.
      const auto oldest = std::min_element(pending_.begin(), pending_.end(), [](auto& a, auto& b) {
        return a.second.deadline < b.second.deadline;
      });
      pending_.erase(oldest);
    }
    const int fd = connection.get();
    PendingOrder& pending = pending_[fd];
    pending.connection = std::move(connection);
    pending.deadline = Clock::now() + std::chrono::milliseconds(kOrderReadMs);
    read_order(fd);  // the order usually came with the connection
  }
}

void Service::read_order(int fd) {
  const auto it = pending_.find(fd);
  if (it == pending_.end()) return;
  std::string why;
  switch (it->second.reader.read_available(fd, &why)) {
    case sw::MessageReader::Step::kMore:
      return;
    case sw::MessageReader::Step::kFailed:
      pending_.erase(it);  // nothing usable arrived: there is no one to answer
      return;
    case sw::MessageReader::Step::kDone:
      break;
  }
  PendingOrder order = std::move(it->second);
  pending_.erase(it);
  last_activity_ = Clock::now();
  handle_order(std::move(order.connection), order.reader);
}

std::optional<Clock::time_point> Service::drop_overdue_orders() {
  const Clock::time_point now = Clock::now();
  std::optional<Clock::time_point> first;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline <= now) {
      it = pending_.erase(it);  // closed unanswered, like one that sent garbage
      continue;
    }
    if (!first || it->second.deadline < *first) first = it->second.deadline;
    ++it;
  }
  return first;
}

void Service::handle_order(UniqueFd connection, sw::MessageReader& reader) {
  const sw::Header header = reader.header();
  const std::vector<std::uint8_t>& payload = reader.payload();
  const std::vector<UniqueFd>& unexpected = reader.fds();
  std::string why;
  sw::WorkerOrder order;
  sw::OrderReply reply;
  if (header.type != sw::MessageType::kOrder || !unexpected.empty()) {
    why = "expected a worker order";
  } else if (sw::decode_order(payload.data(), payload.size(), &order, &why)) {
    if (handed_.size() >= kMaxWorkers) {
      why = "the compile service already runs " + std::to_string(kMaxWorkers) + " workers";
    } else {
      UniqueFd host_socket, output, channel;
      std::set<std::string> warm_set;
      const pid_t pid = provide_worker(order, &host_socket, &output, &channel, &warm_set, &why);
      if (pid > 0) {
        UniqueFd pidfd(open_pidfd(pid));
        if (!pidfd) why = "pidfd_open: " + errno_text();
        reply.ok = pidfd.valid();
        reply.pid = pid;
        if (reply.ok) {
          const int handed[sw::kReplyDescriptors] = {host_socket.get(), output.get(), pidfd.get()};
          if (sw::send_message(connection.get(), sw::encode_reply(reply), handed,
                               sw::kReplyDescriptors, kNoticeSendMs, &why)) {
            Handed& worker = handed_[pid];
            worker.connection = std::move(connection);
            worker.channel = std::move(channel);
            worker.warm = std::move(warm_set);
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

/// A connected pair for a worker: the host's end non-blocking, the worker's above its fixed fds.
bool make_worker_ends(UniqueFd* host_socket, UniqueFd* child_socket, UniqueFd* output_read,
                      UniqueFd* output_write, std::string* why) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *why = "socketpair: " + errno_text();
    return false;
  }
  host_socket->reset(sv[0]);
  child_socket->reset(sv[1]);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *why = "pipe2: " + errno_text();
    return false;
  }
  output_read->reset(pipe_fds[0]);
  output_write->reset(pipe_fds[1]);
  if (!move_fd_above(*child_socket, kWorkerChannelFd) ||
      !move_fd_above(*output_write, kWorkerChannelFd) || !set_nonblocking(host_socket->get()) ||
      !set_nonblocking(output_read->get())) {
    *why = "fcntl: " + errno_text();
    return false;
  }
  return true;
}

pid_t Service::provide_worker(const sw::WorkerOrder& order, UniqueFd* host_socket, UniqueFd* output,
                              UniqueFd* channel, std::set<std::string>* warm_set,
                              std::string* why) {
  const std::string family = compiler_family(order.arch);
  // The worker takes on the host's limits, CPU set and nice value, as one the host spawned would
  // have them. One left with other settings than the service's never serves another host, and a
  // finite CPU time limit needs a worker that has used none of it.
  const bool fresh_only = needs_fresh_worker(order.limits);
  const bool bound = fresh_only || order.limits != own_limits_;
  // The most recently used worker that has this compiler warm: it has compiled before, so its
  // pages are mapped and its caches full, which a fresh fork's are not.
  for (;;) {
    const auto it = std::find_if(stock_.rbegin(), stock_.rend(), [&](const Stocked& w) {
      return order.arch.empty() || w.warm.count(family) != 0;
    });
    if (it == stock_.rend() || fresh_only) break;
    Stocked worker = std::move(*it);
    stock_.erase(std::next(it).base());
    if (!apply_host_limits(worker.pid, order.limits, why)) {
      ::kill(worker.pid, SIGKILL);  // half changed, it serves no one; a fresh one is tried
      break;
    }
    UniqueFd child_socket, output_write;
    std::vector<std::uint8_t> assignment;
    if (!make_worker_ends(host_socket, &child_socket, output, &output_write, why) ||
        !sw::encode_order(order, &assignment, why)) {
      return -1;
    }
    const int fds[2] = {child_socket.get(), output_write.get()};
    if (sw::send_message(worker.channel.get(), assignment, fds, 2, kNoticeSendMs, why)) {
      *channel = std::move(worker.channel);
      *warm_set = std::move(worker.warm);
      if (!order.arch.empty()) warm_set->insert(family);
      if (bound) bound_to_host_.insert(worker.pid);
      return worker.pid;
    }
    ::kill(worker.pid, SIGKILL);  // it could not take the assignment; another one might
    host_socket->reset();
    output->reset();
  }
  warm(order.arch);
  *warm_set = single_threaded() ? warm_ : std::set<std::string>{};
  // A worker is warm for what it has compiled once it comes back.
  if (!order.arch.empty()) warm_set->insert(family);
  const pid_t pid = fork_worker(order, host_socket, output, channel, why);
  if (pid > 0 && !apply_host_limits(pid, order.limits, why)) {
    ::kill(pid, SIGKILL);  // never handed over; the reap finds no one to tell
    host_socket->reset();
    output->reset();
    channel->reset();
    return -1;
  }
  if (pid > 0 && bound) bound_to_host_.insert(pid);
  return pid;
}

pid_t Service::fork_worker(const sw::WorkerOrder& order, UniqueFd* host_socket, UniqueFd* output,
                           UniqueFd* channel, std::string* why) {
  UniqueFd host, child, output_read, output_write;
  if (!make_worker_ends(&host, &child, &output_read, &output_write, why)) return -1;
  int lines[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, lines) != 0) {
    *why = "socketpair: " + errno_text();
    return -1;
  }
  UniqueFd service_end(lines[0]), worker_end(lines[1]);
  if (!move_fd_above(worker_end, kWorkerChannelFd)) {
    *why = "fcntl: " + errno_text();
    return -1;
  }
  if (!set_nonblocking(service_end.get())) {
    *why = "fcntl: " + errno_text();
    return -1;
  }
  pid_t pid = -1;
  if (single_threaded()) {
    // The child is a whole copy of a warm compiler process.
    pid = ::fork();
    if (pid == 0) become_service_worker(order, child.get(), output_write.get(), worker_end.get());
    if (pid < 0) {
      *why = "fork: " + errno_text();
      return -1;
    }
  } else {
    pid = spawn_worker(order, child.get(), output_write.get(), worker_end.get(), why);
    if (pid < 0) return -1;
  }
  *host_socket = std::move(host);
  *output = std::move(output_read);
  *channel = std::move(service_end);
  return pid;
}

bool Service::single_threaded() {
  std::error_code ec;
  std::size_t threads = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++threads;
  }
  if (ec || threads != 1) can_fork_ = false;  // a compiler's threads do not go away
  return can_fork_;
}

pid_t Service::spawn_worker(const sw::WorkerOrder& order, int child_socket, int output, int channel,
                            std::string* why) {
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
  std::vector<char*> envp = spawn_environment(order.environment);
  const char* argv[] = {self_.c_str(), "--service-worker", order.temp_dir.c_str(), nullptr};
  pid_t pid = -1;
  // The service's other descriptors are all close-on-exec.
  const int rc = ok ? posix_spawn(&pid, self_.c_str(), actions, setup.attr(),
                                  const_cast<char* const*>(argv), envp.data())
                    : ENOMEM;
  if (rc != 0) {
    *why = "cannot start " + self_ + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

void Service::warm(const std::string& arch) {
  const std::string family = compiler_family(arch);
  if (arch.empty() || warm_.count(family) != 0) return;
  warm_.insert(family);  // once, whatever the outcome: a compiler that fails to warm fails later
  try {
    (void)compile_for_target(warmup_request(arch));
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
    last_activity_ = Clock::now();
    bound_to_host_.erase(pid);
    if (const auto it = handed_.find(pid); it != handed_.end()) {
      if (it->second.connection) {
        std::string why;
        sw::send_message(it->second.connection.get(), sw::encode_exit({pid, status}), nullptr, 0,
                         kNoticeSendMs, &why);
      }
      handed_.erase(it);
    }
    stock_.erase(std::remove_if(stock_.begin(), stock_.end(),
                                [&](const Stocked& s) { return s.pid == pid; }),
                 stock_.end());
  }
}

void Service::released(pid_t pid) {
  const auto it = handed_.find(pid);
  if (it == handed_.end()) return;
  it->second.connection.reset();
  last_activity_ = Clock::now();
  if (it->second.idle) {
    to_stock(pid);
  } else {
    // Its host let go mid-compile, or died: a worker that does not come back soon is killed.
    it->second.kill_at = Clock::now() + std::chrono::milliseconds(kReleaseGraceMs);
  }
}

void Service::heard_from(pid_t pid) {
  const auto it = handed_.find(pid);
  if (it == handed_.end()) return;
  sw::Header header;
  std::vector<std::uint8_t> payload;
  std::vector<UniqueFd> fds;
  std::string why;
  if (!sw::read_message(it->second.channel.get(), kNoticeSendMs, &header, &payload, &fds, &why) ||
      header.type != sw::MessageType::kIdle || !fds.empty()) {
    // Its line closed (it is exiting: the reap reports how) or it said something else.
    it->second.channel.reset();
    if (!why.empty()) ::kill(pid, SIGKILL);
    return;
  }
  it->second.idle = true;
  if (!it->second.connection) to_stock(pid);
}

void Service::to_stock(pid_t pid) {
  const auto it = handed_.find(pid);
  if (it == handed_.end()) return;
  if (bound_to_host_.erase(pid) != 0) {
    handed_.erase(it);  // it has its last host's limits: its line closes, so it exits
    return;
  }
  if (stock_.size() < max_stock_ && it->second.channel) {
    stock_.push_back(Stocked{pid, std::move(it->second.channel), std::move(it->second.warm)});
  } else if (stock_.size() >= max_stock_ && !stock_.empty()) {
    // Keep the warmest: the least recently used goes (its line closes, so it exits).
    stock_.erase(stock_.begin());
    if (it->second.channel) {
      stock_.push_back(Stocked{pid, std::move(it->second.channel), std::move(it->second.warm)});
    }
  }
  handed_.erase(it);  // without a channel it exits on its own; the reap finds no one to tell
}

void Service::kill_overdue() {
  const auto now = Clock::now();
  for (auto& [pid, worker] : handed_) {
    if (!worker.connection && !worker.idle && now >= worker.kill_at) ::kill(pid, SIGKILL);
  }
}

bool Service::reachable() const {
  return socket_identity_.ino != 0 && identity_of(socket_path_) == socket_identity_;
}

bool Service::exit_if_still_idle() {
  // No one can reach a service whose socket is gone or was taken over: it just leaves.
  const bool reachable = this->reachable();
  // A starter holds the lock while it connects: never vanish under it.
  std::string why;
  UniqueFd lock = lock_service_start(lock_path_, 0, &why);
  if (reachable && !lock) {
    last_activity_ = Clock::now();
    return false;
  }
  pollfd pending{listener_.get(), POLLIN, 0};
  if (reachable && ::poll(&pending, 1, 0) > 0) return false;  // an order waits: serve it first
  leave(lock);
  return true;
}

void Service::leave() {
  // Asked to stop: the lock file goes too, unless a starter holds it right now (it then
  // starts the next service, which removes it in its turn).
  std::string why;
  leave(lock_service_start(lock_path_, 0, &why));
}

void Service::leave(const UniqueFd& start_lock) {
  std::vector<pid_t> waiting;
  for (const Stocked& worker : stock_) waiting.push_back(worker.pid);
  stock_.clear();  // their lines close: each waiting worker exits
  // Reaped here, before the service goes: an orphan would be reparented, and to a host that is a
  // child subreaper it would stay a zombie. A worker that does not leave at once is killed.
  const auto deadline = Clock::now() + std::chrono::milliseconds(kStockExitGraceMs);
  for (const pid_t pid : waiting) {
    int status = 0;
    pid_t reaped = 0;
    while ((reaped = ::waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (reaped == 0) {
      ::kill(pid, SIGKILL);  // unreaped, so still ours
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  // Only our own socket: a newer service may have taken the name.
  if (socket_identity_.ino != 0 && identity_of(socket_path_) == socket_identity_) {
    ::unlink(socket_path_.c_str());
  }
  listener_.reset();
  remove_directory_tree(temp_dir_);
  // Whoever opens it next finds the path gone or new and takes the lock afresh; without this,
  // every worker binary ever used (each rebuild) would leave a file in the runtime dir.
  if (start_lock) ::unlink(lock_path_.c_str());
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
      !make_runtime_directory(parent_dir(socket_path), &why)) {
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
  // Its own process group, so a Ctrl-C meant for the host that started it passes it by. Not its
  // own session: the scheduler groups tasks by session (autogroup), and sixteen workers in a
  // session of their own would share one task's worth of CPU against every busy host thread.
  ::setpgid(0, 0);
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
