// SPDX-License-Identifier: MIT
// service_start_lock.cpp - the lock file beside a compile service's socket that orders its start
// and its idle exit, removable by whoever holds it.
#include "hip_backend/service/service_start_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "support/files/file_lock.h"
#include "support/files/private_file.h"

namespace hipacm::backend {
namespace {

// How often a starter looks again while another process holds the lock.
constexpr std::chrono::milliseconds kPause{5};

}  // namespace

Expected<UniqueFd> lock_service_start(const std::string& lock_path, int wait_ms) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    // This user's own regular file only: a FIFO or another user's file in its place is refused.
    UniqueFd lock = open_private_file(lock_path, O_RDWR | O_CREAT);
    if (!lock) {
      return Failure{
          HIPACM_ERROR_INTERNAL,
          "cannot open " + lock_path + " as this user's own regular file: " + std::strerror(errno)};
    }
    const auto left =
        std::max(std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()),
                 std::chrono::milliseconds(0));
    FileLock held_lock =
        FileLock::acquire(std::move(lock), LockKind::kFlock, LockRange::whole_file(),
                          LockWait::up_to(left, kPause, kPause));
    if (!held_lock.held()) {
      return Failure{HIPACM_ERROR_INTERNAL,
                     held_lock.busy()
                         ? "another process holds " + lock_path
                         : "cannot lock " + lock_path + ": " + std::strerror(held_lock.error())};
    }
    // The lock lives as long as the descriptor the caller keeps (a service's exit hands it on).
    lock = std::move(held_lock).take_fd();
    // The holder before us may have removed the file: a lock on an unlinked inode (or on one
    // that a newer file has replaced) excludes no one who opens the path now.
    struct stat held {
    }, named{};
    if (::fstat(lock.get(), &held) == 0 && ::lstat(lock_path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      return lock;
    }
    if (Clock::now() >= deadline) {
      return Failure{HIPACM_ERROR_INTERNAL, lock_path + " kept changing while it was being locked"};
    }
  }
}

}  // namespace hipacm::backend
