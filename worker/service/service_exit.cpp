// SPDX-License-Identifier: MIT
// service_exit.cpp - how the compile service leaves: once idle or unreachable, never under a
// starter holding the start lock, reaping its waiting workers and removing what it owns.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "hip_backend/process/private_temp_dir.h"
#include "hip_backend/service/service_start_lock.h"
#include "worker/service/service_internal.h"

namespace hipacm::backend::service_internal {
namespace {

// How long the waiting workers of a leaving service have to exit before they are killed.
constexpr int kStockExitGraceMs = 1000;

}  // namespace

bool Service::exit_if_still_idle() {
  // No one can reach a service whose socket is gone or was taken over: it just leaves.
  const bool reachable = socket_.reachable();
  // A starter holds the lock while it connects: never vanish under it.
  Expected<UniqueFd> locked = lock_service_start(lock_path_, 0);
  UniqueFd lock = locked ? std::move(locked).value() : UniqueFd();
  if (reachable && !lock) {
    last_activity_ = Clock::now();
    return false;
  }
  // An order waits: serve it first.
  if (reachable && socket_.connection_waiting()) return false;
  leave(lock);
  return true;
}

void Service::leave() {
  // Asked to stop: the lock file goes too, unless a starter holds it right now (it then
  // starts the next service, which removes it in its turn).
  Expected<UniqueFd> locked = lock_service_start(lock_path_, 0);
  leave(locked ? std::move(locked).value() : UniqueFd());
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
  socket_.close();
  remove_directory_tree(temp_dir_);
  // Whoever opens it next finds the path gone or new and takes the lock afresh; without this,
  // every worker binary ever used (each rebuild) would leave a file in the runtime dir.
  if (start_lock) ::unlink(lock_path_.c_str());
}

}  // namespace hipacm::backend::service_internal
