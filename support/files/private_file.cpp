// SPDX-License-Identifier: MIT
// private_file.cpp - the checked, non-blocking open of a file in a private directory.
#include "support/files/private_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace hipacm::backend {

UniqueFd open_private_file(const std::string& path, int flags, mode_t kind, struct stat* st,
                           mode_t create_mode) {
  const bool keep_nonblocking = (flags & O_NONBLOCK) != 0;
  const bool truncate = (flags & O_TRUNC) != 0;
  const int open_flags = (flags & ~O_TRUNC) | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
  UniqueFd fd(::open(path.c_str(), open_flags, create_mode));
  if (!fd.valid()) return fd;
  struct stat local {};
  struct stat* status = st != nullptr ? st : &local;
  if (::fstat(fd.get(), status) != 0) return UniqueFd();
  if ((status->st_mode & S_IFMT) != kind || status->st_uid != ::geteuid()) {
    errno = (status->st_mode & S_IFMT) != kind ? EINVAL : EPERM;
    return UniqueFd();
  }
  if (!keep_nonblocking) {
    const int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0) return UniqueFd();
  }
  if (truncate) {
    if (::ftruncate(fd.get(), 0) != 0) return UniqueFd();
    status->st_size = 0;
  }
  return fd;
}

}  // namespace hipacm::backend
