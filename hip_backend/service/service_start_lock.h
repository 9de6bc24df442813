// SPDX-License-Identifier: MIT
// service_start_lock.h - the lock file beside a compile service's socket that orders its start
// and its idle exit, removable by whoever holds it.
#pragma once

#include <string>

#include "support/failure.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// Locks `<socket>.lock` (a FileLock of kind kFlock, exclusive, handed over with its descriptor:
/// it lasts until the last copy of that descriptor closes): held by a process that starts the
/// service and by a service that decides to exit, so that a service never leaves while a starter
/// connects. The holder may remove the file (a service does, as it exits), so a lock only counts
/// once the path still names the file that was locked; otherwise it is taken again on the new file.
/// Waits up to `wait_ms` (0: a single try). The locked descriptor, or why it cannot be had.
Expected<UniqueFd> lock_service_start(const std::string& lock_path, int wait_ms);

}  // namespace hipacm::backend
