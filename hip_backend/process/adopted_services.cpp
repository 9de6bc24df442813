// SPDX-License-Identifier: MIT
// adopted_services.cpp - pidfds of compile services this subreaper process adopted.
#include "hip_backend/process/adopted_services.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "hip_backend/process/child_descriptors.h"
#include "support/fork_epoch.h"

namespace hipacm::backend {
namespace {

// glibc names it P_PIDFD from 2.36 on; the kernel's value is fixed.
constexpr idtype_t kIdPidfd = static_cast<idtype_t>(3);

struct Adopted {
  boost::mutex mutex;  ///< held by fork() (ForkGuarded)
  std::vector<int> pidfds;
};

// A forked child did not start these services: it closes its copies and forgets them.
void forget_in_child(Adopted& adopted) noexcept {
  for (const int fd : adopted.pidfds) ::close(fd);
  adopted.pidfds.clear();
}

Adopted& adopted() {
  return ForkGuarded<Adopted, ForkRank::kAdoptedServices, &forget_in_child>::instance();
}

/// The parent pid of `pid` from /proc, or -1.
pid_t parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 4 >= text.size()) return -1;
  try {
    std::size_t used = 0;
    const long ppid = std::stol(text.substr(close + 4), &used);
    return used > 0 ? static_cast<pid_t>(ppid) : -1;
  } catch (...) {
    return -1;
  }
}

}  // namespace

void adopt_started_service(pid_t service) noexcept {
  int subreaper = 0;
  if (service <= 0 || ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper) != 0 || subreaper == 0) return;
  try {
    const int pidfd = open_pidfd(service);
    if (pidfd < 0) return;
    // Checked after the pidfd exists: from here on the pidfd names this very process, whatever
    // happens to its pid.
    if (parent_of(service) != ::getpid()) {
      ::close(pidfd);
      return;
    }
    Adopted& state = adopted();
    boost::lock_guard<boost::mutex> lock(state.mutex);
    state.pidfds.push_back(pidfd);
  } catch (...) {
    // No memory for the list: the service stays unreaped, as before this existed.
  }
}

std::size_t reap_adopted_services() noexcept try {
  Adopted& state = adopted();
  boost::lock_guard<boost::mutex> lock(state.mutex);
  std::size_t reaped = 0;
  for (auto it = state.pidfds.begin(); it != state.pidfds.end();) {
    siginfo_t info{};
    const int rc = ::waitid(kIdPidfd, static_cast<id_t>(*it), &info, WEXITED | WNOHANG);
    const bool gone = (rc == 0 && info.si_pid != 0) || (rc != 0 && errno == ECHILD);
    if (!gone) {
      ++it;
      continue;
    }
    reaped += rc == 0 ? 1 : 0;
    ::close(*it);
    it = state.pidfds.erase(it);
  }
  return reaped;
} catch (...) {
  return 0;  // the list could not be made: nothing was adopted either
}

std::size_t adopted_service_count() noexcept try {
  Adopted& state = adopted();
  boost::lock_guard<boost::mutex> lock(state.mutex);
  return state.pidfds.size();
} catch (...) {
  return 0;
}

}  // namespace hipacm::backend
