// SPDX-License-Identifier: MIT
// byte_lock.h - open-file-description locks on single bytes of a file: the one-byte claims and
// slots that hipacm processes share without a daemon.
#pragma once

#include <cstdint>
#include <optional>

namespace hipacm::backend {

/// Takes (F_WRLCK) or drops (F_UNLCK) the lock on byte `offset` of `fd` for fd's open file
/// description, without waiting (F_OFD_SETLK). The kernel drops it when the last descriptor of
/// that description closes, so a process that dies however it dies holds nothing. False with
/// errno set (EAGAIN or EACCES: another description holds it).
bool lock_one_byte(int fd, std::int64_t offset, short type) noexcept;

/// Whether another open file description holds a lock on byte `offset` of `fd` (F_OFD_GETLK);
/// nullopt with errno set when the file system cannot tell (no OFD locks there).
std::optional<bool> byte_locked_elsewhere(int fd, std::int64_t offset) noexcept;

}  // namespace hipacm::backend
