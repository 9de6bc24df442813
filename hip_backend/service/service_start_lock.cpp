// SPDX-License-Identifier: MIT
// service_start_lock.cpp - the lock file beside a compile service's socket that orders its start
// and its idle exit, removable by whoever holds it.
#include "hip_backend/service/service_start_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "support/private_file.h"

namespace hipacm::backend {

UniqueFd lock_service_start(const std::string& lock_path, int wait_ms, std::string* why) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    // This user's own regular file only: a FIFO or another user's file in its place is refused.
    UniqueFd lock = open_private_file(lock_path, O_RDWR | O_CREAT);
    if (!lock) {
      *why =
          "cannot open " + lock_path + " as this user's own regular file: " + std::strerror(errno);
      return UniqueFd();
    }
    while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        *why = "cannot lock " + lock_path + ": " + std::strerror(errno);
        return UniqueFd();
      }
      if (Clock::now() >= deadline) {
        *why = "another process holds " + lock_path;
        return UniqueFd();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // The holder before us may have removed the file: a lock on an unlinked inode (or on one
    // that a newer file has replaced) excludes no one who opens the path now.
    struct stat held {
    }, named{};
    if (::fstat(lock.get(), &held) == 0 && ::lstat(lock_path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      return lock;
    }
    if (Clock::now() >= deadline) {
      *why = lock_path + " kept changing while it was being locked";
      return UniqueFd();
    }
  }
}

}  // namespace hipacm::backend
