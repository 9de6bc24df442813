// SPDX-License-Identifier: MIT
// private_file.h - opens a file in a directory hipacm keeps for itself, never through a link and
// never blocking on a FIFO, and accepts it only as this user's own file of the expected kind.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// Opens `path` with `flags` (O_RDONLY, O_RDWR, O_WRONLY, with O_CREAT (`create_mode`), O_EXCL,
/// O_TRUNC, O_NONBLOCK as wanted) and returns it only when it is a file of type `kind`
/// (S_IFREG or S_IFIFO) owned by this user; otherwise an invalid descriptor with errno set.
///
/// Always adds O_NOFOLLOW, O_CLOEXEC, O_NOCTTY and, for the open itself, O_NONBLOCK: a FIFO
/// planted where a regular file was expected would otherwise hold open() (and the process) until
/// someone opens its other end. O_NONBLOCK is cleared again after the checks unless `flags` asked
/// for it. O_TRUNC is applied only after the checks, so a file that is not ours is never cut.
/// `st`, when given, receives the file's status.
UniqueFd open_private_file(const std::string& path, int flags, mode_t kind = S_IFREG,
                           struct stat* st = nullptr, mode_t create_mode = 0600);

}  // namespace hipacm::backend
