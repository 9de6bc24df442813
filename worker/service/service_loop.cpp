// SPDX-License-Identifier: MIT
// service_loop.cpp - the compile service's main loop: one poll over its socket, its signals, the
// orders arriving and its workers' lines, with the deadlines of each.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <optional>
#include <utility>
#include <vector>

#include "worker/service/compile_service.h"
#include "worker/service/service_internal.h"

namespace hipacm::backend::service_internal {
namespace {

// How often an idle service checks that its socket still leads to it.
constexpr std::chrono::seconds kReachableCheck{1};

enum class Source {
  kListener,
  kSignals,
  kConnection,
  kHandedChannel,
  kStockChannel,
  kPendingOrder
};

}  // namespace

Service::Service(UniqueFd listener, const std::string& socket_path, std::string temp_dir)
    : socket_(std::move(listener), socket_path),
      lock_path_(socket_path + ".lock"),
      temp_dir_(std::move(temp_dir)),
      idle_(std::chrono::milliseconds(compile_service_idle_ms())),
      max_stock_(stock_limit()),
      intake_(&last_activity_,
              [this](UniqueFd connection, sw::MessageReader& reader) {
                handle_order(std::move(connection), reader);
              }),
      warm_(temp_dir_) {}

unsigned Service::stock_limit() {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return static_cast<unsigned>(std::clamp<long>(cpus, 1, 256));
}

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
    watch(socket_.fd(), Source::kListener, 0);
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
    if (const auto first = intake_.drop_overdue()) wake = wake ? std::min(*wake, *first) : *first;
    for (const int fd : intake_.descriptors()) watch(fd, Source::kPendingOrder, fd);
    int timeout = -1;
    if (wake) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now()).count();
      timeout = static_cast<int>(std::clamp<long long>(left, 0, 24LL * 3600 * 1000));
    }
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) return 1;
    kill_overdue();  // every turn: a busy service may never time out
    if (n == 0) {
      const bool done = Clock::now() >= last_activity_ + idle_ || !socket_.reachable();
      if (handed_.empty() && intake_.empty() && done && exit_if_still_idle()) return 0;
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
          intake_.accept_all(socket_.fd());
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
          intake_.read(pid);  // `pid` holds the descriptor
          break;
        case Source::kStockChannel:
          stocked_spoke(pid);
          break;
      }
    }
  }
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

}  // namespace hipacm::backend::service_internal
