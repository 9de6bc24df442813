// SPDX-License-Identifier: MIT
// file_lock.h - the one advisory file lock of hipacm: an exclusive lock on a whole file or a byte
// range, of the kernel kind its user needs, taken at once, within a bounded wait, or blocking.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// Which kernel lock. Both kinds belong to an open file description, not to a process or a
/// descriptor number, so with either:
///  - the kernel drops the lock when the last descriptor of that description closes, however
///    its holder dies: a crashed or killed process never keeps others waiting, and there is
///    nothing to clean up;
///  - two open()s of one file exclude each other, even in one process (two threads);
///  - a fork()ed child shares the description and so the lock: the child closing its copy
///    leaves the lock with the parent, but an explicit unlock in the child frees it for both
///    (which is why users that unlock explicitly mind their fork epoch or close-on-fork).
/// Linux keeps the two kinds apart (neither sees the other's locks), so every process that
/// shares a file must use the same kind on it; each user keeps the kind its file always had.
/// POSIX process locks (F_SETLK) are not offered: any close of any descriptor of the file drops
/// them, and a child never inherits them.
enum class LockKind {
  kOpenFileDescription,  ///< fcntl F_OFD_SETLK / F_OFD_SETLKW: the whole file or a byte range
  kFlock,                ///< flock(2) LOCK_EX: the whole file only
};

/// What is locked: `length` bytes from `offset`. Length 0 means to the end of the file however it
/// grows, so {0, 0} is the whole file.
struct LockRange {
  std::int64_t offset = 0;
  std::int64_t length = 0;

  static constexpr LockRange whole_file() noexcept { return {0, 0}; }
  static constexpr LockRange byte(std::int64_t at) noexcept { return {at, 1}; }
  constexpr bool whole() const noexcept { return offset == 0 && length == 0; }
};

/// How long an acquisition waits for another holder, and how it polls meanwhile: it tries,
/// sleeps `first_pause`, tries again, and doubles the pause up to `longest_pause`, never sleeping
/// past the end of the wait. Polling, because a blocking lock call cannot honour a time limit.
struct LockWait {
  /// Negative: block until the lock is had (F_OFD_SETLKW, flock without LOCK_NB). Zero: one try.
  std::chrono::milliseconds max_wait{0};
  std::chrono::milliseconds first_pause{1};
  std::chrono::milliseconds longest_pause{5};

  static constexpr LockWait once() noexcept { return {}; }
  static constexpr LockWait forever() noexcept { return {std::chrono::milliseconds(-1)}; }
  static constexpr LockWait up_to(std::chrono::milliseconds wait, std::chrono::milliseconds first,
                                  std::chrono::milliseconds longest) noexcept {
    return {wait, first, longest};
  }
};

/// An exclusive lock held while the object lives: move-only. It either owns its descriptor
/// (closed when the lock goes) or borrows one that its owner keeps open at least as long.
///
/// Destroying (or unlock()ing) a held lock unlocks it explicitly, then closes an owned descriptor:
/// explicitly, so that a fork()ed child still sharing the description does not keep it held. A
/// user whose lock should instead live exactly as long as its descriptor (and so be left alone by
/// a child) takes the descriptor with take_fd(). abandon() forgets a lock without touching it.
class FileLock {
 public:
  /// Locks `fd`, which the lock then owns; waits as `wait` says. Never throws: a lock that could
  /// not be had is an object that does not hold (see busy() and error()), which still owns `fd`.
  static FileLock acquire(UniqueFd fd, LockKind kind, LockRange range, LockWait wait) noexcept;
  /// The same on a descriptor the caller owns and keeps open while the lock lives.
  static FileLock acquire_borrowed(int fd, LockKind kind, LockRange range, LockWait wait) noexcept;

  FileLock() noexcept = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() { unlock(); }

  bool held() const noexcept { return held_; }
  explicit operator bool() const noexcept { return held_; }
  /// Not held because another open file description held the lock for the whole wait.
  bool busy() const noexcept { return !held_ && busy_; }
  /// The errno of the attempt that gave up when not held for another reason (say ENOLCK, or
  /// EINVAL from a file system without OFD locks); 0 otherwise.
  int error() const noexcept { return error_; }
  /// How long the acquisition took, waiting included.
  std::chrono::milliseconds waited() const noexcept { return waited_; }
  /// The descriptor locked (owned or borrowed); -1 when there is none.
  int fd() const noexcept { return owned_.valid() ? owned_.get() : borrowed_; }

  /// Unlocks a held lock explicitly (for every descriptor of its description, a fork()ed child's
  /// included) and closes an owned descriptor. Nothing when not held, except that close.
  void unlock() noexcept;
  /// Forgets the lock without unlocking it and without closing an owned descriptor: for a
  /// fork()ed child whose copy of the descriptor was closed already (its number may name another
  /// file by now) while the parent still holds the lock.
  void abandon() noexcept;
  /// Hands the owned descriptor over with the lock still on its description: the lock then ends
  /// when the last descriptor of that description closes, and a fork()ed child that closes its
  /// copy leaves it held. An invalid descriptor when nothing is held or owned.
  UniqueFd take_fd() && noexcept;

 private:
  static FileLock take(FileLock lock, LockKind kind, LockRange range, LockWait wait) noexcept;

  UniqueFd owned_;
  int borrowed_ = -1;
  LockKind kind_ = LockKind::kOpenFileDescription;
  LockRange range_;
  bool held_ = false;
  bool busy_ = false;
  int error_ = 0;
  std::chrono::milliseconds waited_{0};
};

/// Whether another open file description holds an OFD (or POSIX) lock on any byte of `range` of
/// `fd` (F_OFD_GETLK); nullopt with errno set when the file system cannot tell (no OFD locks
/// there). flock(2) locks cannot be queried.
std::optional<bool> locked_elsewhere(int fd, LockRange range) noexcept;

}  // namespace hipacm::backend
