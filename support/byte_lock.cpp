// SPDX-License-Identifier: MIT
// byte_lock.cpp - F_OFD_SETLK and F_OFD_GETLK on one byte.
#include "support/byte_lock.h"

#include <fcntl.h>

namespace hipacm::backend {
namespace {

struct flock one_byte(std::int64_t offset, short type) noexcept {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = static_cast<off_t>(offset);
  lock.l_len = 1;
  return lock;  // l_pid stays 0, as OFD locks require
}

}  // namespace

bool lock_one_byte(int fd, std::int64_t offset, short type) noexcept {
  struct flock lock = one_byte(offset, type);
  return ::fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

std::optional<bool> byte_locked_elsewhere(int fd, std::int64_t offset) noexcept {
  struct flock query = one_byte(offset, F_WRLCK);
  if (::fcntl(fd, F_OFD_GETLK, &query) != 0) return std::nullopt;
  return query.l_type != F_UNLCK;
}

}  // namespace hipacm::backend
