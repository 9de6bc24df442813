// SPDX-License-Identifier: MIT
// handed_workers.cpp - the compile service's workers after handout: released by their hosts, idle
// again and back in the stock, killed when overdue, and reaped with an exit notice to their host.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "worker/service/service_internal.h"

namespace hipacm::backend::service_internal {
namespace {

// A released worker that is still compiling (its host died or gave up on it) has this long to
// come back before it is killed.
constexpr int kReleaseGraceMs = 2000;

}  // namespace

void Service::reap_children() {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    last_activity_ = Clock::now();
    bound_to_host_.erase(pid);
    if (const auto it = handed_.find(pid); it != handed_.end()) {
      if (it->second.connection) {
        (void)sw::send_message(it->second.connection.get(), sw::encode_exit({pid, status}), nullptr,
                               0, kNoticeSendMs);
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
  const sw::ReadResult read =
      sw::read_message(it->second.channel.get(), kNoticeSendMs, &header, &payload, &fds);
  if (!read || header.type != sw::MessageType::kIdle || !fds.empty()) {
    // Its line closed (it is exiting: the reap reports how) or it said something else.
    it->second.channel.reset();
    if (!read.error.empty()) ::kill(pid, SIGKILL);
    return;
  }
  it->second.idle = true;
  if (!it->second.connection) to_stock(pid);
}

void Service::stocked_spoke(pid_t pid) {
  // A waiting worker has nothing to say: it died or misbehaved. Either way it goes.
  for (auto it = stock_.begin(); it != stock_.end(); ++it) {
    if (it->pid != pid) continue;
    ::kill(pid, SIGKILL);  // unreaped, so still ours
    stock_.erase(it);
    break;
  }
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

}  // namespace hipacm::backend::service_internal
