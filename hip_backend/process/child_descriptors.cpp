// SPDX-License-Identifier: MIT
// child_descriptors.cpp - descriptor moves, O_NONBLOCK and pidfd_open for starting workers.
#include "hip_backend/process/child_descriptors.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace hipacm::backend {

void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0U, 0) == 0) return;
#endif
  const long max = std::min<long>(::sysconf(_SC_OPEN_MAX), 65536);
  for (int fd = first; fd < max; ++fd) ::close(fd);
}

bool move_fd_above(UniqueFd& fd, int highest_fixed) {
  if (fd.get() > highest_fixed) return true;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, highest_fixed + 1);
  if (moved < 0) return false;
  fd.reset(moved);
  return true;
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // O_CLOEXEC is implied
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace hipacm::backend
