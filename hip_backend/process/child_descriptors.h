// SPDX-License-Identifier: MIT
// child_descriptors.h - the descriptor steps shared by everything that starts a worker: keeping
// sources clear of a child's fixed descriptors, non-blocking ends, pidfds.
#pragma once

#include <sys/types.h>

#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// Moves fd (close-on-exec) above `highest_fixed`, so that dup2 onto a child's fixed
/// descriptors 0..highest_fixed never overwrites a source (and never dup2s a descriptor onto
/// itself, which would leave FD_CLOEXEC set on old glibc). False with errno set when it cannot.
bool move_fd_above(UniqueFd& fd, int highest_fixed);

/// Sets O_NONBLOCK on fd.
bool set_nonblocking(int fd);

/// Closes every descriptor from `first` up: a child keeps only what it was meant to have.
void close_from(int first);

/// A pidfd for `pid` (close-on-exec), or -1 with errno (ENOSYS where the kernel or the headers
/// lack pidfd_open).
int open_pidfd(pid_t pid);

}  // namespace hipacm::backend
