// SPDX-License-Identifier: MIT
// file_lock.cpp - FileLock: OFD (fcntl) and flock locks taken at once, polled for, or blocking.
#include "support/files/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

namespace hipacm::backend {
namespace {

using Clock = std::chrono::steady_clock;

struct flock ofd_request(LockRange range, short type) noexcept {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = static_cast<off_t>(range.offset);
  lock.l_len = static_cast<off_t>(range.length);
  return lock;  // l_pid stays 0, as OFD locks require
}

/// One lock call; false with errno set.
bool lock_call(int fd, LockKind kind, LockRange range, bool block) noexcept {
  if (kind == LockKind::kFlock) {
    if (!range.whole()) {
      errno = EINVAL;  // flock(2) has no ranges
      return false;
    }
    return ::flock(fd, block ? LOCK_EX : LOCK_EX | LOCK_NB) == 0;
  }
  struct flock lock = ofd_request(range, F_WRLCK);
  return ::fcntl(fd, block ? F_OFD_SETLKW : F_OFD_SETLK, &lock) == 0;
}

void unlock_call(int fd, LockKind kind, LockRange range) noexcept {
  if (kind == LockKind::kFlock) {
    ::flock(fd, LOCK_UN);
    return;
  }
  struct flock lock = ofd_request(range, F_UNLCK);
  ::fcntl(fd, F_OFD_SETLK, &lock);
}

/// Another description holds it: flock says EWOULDBLOCK, fcntl EAGAIN or EACCES.
bool held_elsewhere(int error) noexcept {
  return error == EAGAIN || error == EWOULDBLOCK || error == EACCES;
}

std::chrono::milliseconds millis(Clock::duration d) noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

}  // namespace

FileLock FileLock::acquire(UniqueFd fd, LockKind kind, LockRange range, LockWait wait) noexcept {
  FileLock lock;
  lock.owned_ = std::move(fd);
  return take(std::move(lock), kind, range, wait);
}

FileLock FileLock::acquire_borrowed(int fd, LockKind kind, LockRange range,
                                    LockWait wait) noexcept {
  FileLock lock;
  lock.borrowed_ = fd;
  return take(std::move(lock), kind, range, wait);
}

FileLock FileLock::take(FileLock lock, LockKind kind, LockRange range, LockWait wait) noexcept {
  lock.kind_ = kind;
  lock.range_ = range;
  const int fd = lock.fd();
  const Clock::time_point start = Clock::now();
  if (fd < 0) {
    lock.error_ = EBADF;
    return lock;
  }
  const bool block = wait.max_wait.count() < 0;
  const Clock::time_point deadline = start + std::max(wait.max_wait, std::chrono::milliseconds(0));
  std::chrono::milliseconds pause = std::max(wait.first_pause, std::chrono::milliseconds(1));
  for (;;) {
    if (lock_call(fd, kind, range, block)) {
      lock.held_ = true;
      break;
    }
    const int error = errno;
    if (error == EINTR) continue;  // a signal, not an answer: ask again
    if (!held_elsewhere(error)) {
      lock.error_ = error;
      break;
    }
    lock.busy_ = true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::max(wait.longest_pause, pause));
  }
  lock.waited_ = millis(Clock::now() - start);
  return lock;
}

FileLock::FileLock(FileLock&& other) noexcept
    : owned_(std::move(other.owned_)),
      borrowed_(std::exchange(other.borrowed_, -1)),
      kind_(other.kind_),
      range_(other.range_),
      held_(std::exchange(other.held_, false)),
      busy_(other.busy_),
      error_(other.error_),
      waited_(other.waited_) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    unlock();
    owned_ = std::move(other.owned_);
    borrowed_ = std::exchange(other.borrowed_, -1);
    kind_ = other.kind_;
    range_ = other.range_;
    held_ = std::exchange(other.held_, false);
    busy_ = other.busy_;
    error_ = other.error_;
    waited_ = other.waited_;
  }
  return *this;
}

void FileLock::unlock() noexcept {
  if (held_) unlock_call(fd(), kind_, range_);
  held_ = false;
  borrowed_ = -1;
  owned_.reset();
}

void FileLock::abandon() noexcept {
  held_ = false;
  borrowed_ = -1;
  owned_.release();
}

UniqueFd FileLock::take_fd() && noexcept {
  UniqueFd fd = std::move(owned_);
  if (!held_) fd.reset();
  held_ = false;
  borrowed_ = -1;
  return fd;
}

std::optional<bool> locked_elsewhere(int fd, LockRange range) noexcept {
  struct flock query = ofd_request(range, F_WRLCK);
  if (::fcntl(fd, F_OFD_GETLK, &query) != 0) return std::nullopt;
  return query.l_type != F_UNLCK;
}

}  // namespace hipacm::backend
