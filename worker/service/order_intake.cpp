// SPDX-License-Identifier: MIT
// order_intake.cpp - accepting the compile service's connections (its own user's only) and
// reading their orders side by side, each under its own deadline.
#include "worker/service/order_intake.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

namespace hipacm::backend::service_internal {
namespace {

// Each connection has its own deadline, and orders are read side by side: idle connections never
// add up to a delay for anyone else's order.
constexpr int kOrderReadMs = 5000;
// Connections whose order has not arrived yet; beyond this the oldest is dropped. More than a
// burst of real hosts, few enough that a flood of idle connections costs nothing.
constexpr std::size_t kMaxPendingOrders = 64;

bool same_user(int connection) {
  ucred peer{};
  socklen_t size = sizeof peer;
  return ::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
         peer.uid == ::geteuid();
}

}  // namespace

OrderIntake::OrderIntake(Clock::time_point* last_activity, OnOrder on_order)
    : last_activity_(last_activity), on_order_(std::move(on_order)) {}

void OrderIntake::accept_all(int listener) {
  for (;;) {
    UniqueFd connection(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!connection) return;  // EAGAIN: no one else is waiting
    *last_activity_ = Clock::now();
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
    read(fd);  // the order usually came with the connection
  }
}

void OrderIntake::read(int fd) {
  const auto it = pending_.find(fd);
  if (it == pending_.end()) return;
  switch (it->second.reader.read_available(fd)) {
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
  *last_activity_ = Clock::now();
  on_order_(std::move(order.connection), order.reader);
}

std::optional<Clock::time_point> OrderIntake::drop_overdue() {
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

std::vector<int> OrderIntake::descriptors() const {
  std::vector<int> fds;
  fds.reserve(pending_.size());
  for (const auto& [fd, order] : pending_) fds.push_back(fd);
  return fds;
}

}  // namespace hipacm::backend::service_internal
