// SPDX-License-Identifier: MIT
// spawn_setup.h - posix_spawn's attribute and file actions as one object, with the signal
// setting that every process hipacm starts gets.
#pragma once

#include <spawn.h>

#include <string>
#include <vector>

namespace hipacm::backend {

/// Owns a posix_spawn attribute and file-action list for one spawn (workers, the compile
/// service, the service's own workers).
class SpawnSetup {
 public:
  SpawnSetup();
  ~SpawnSetup();
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  /// Both objects were initialized.
  bool ok() const noexcept { return ok_; }
  posix_spawn_file_actions_t* actions() noexcept { return &actions_; }
  posix_spawnattr_t* attr() noexcept { return &attr_; }

  /// The child starts with an empty signal mask and every signal at its default: the host's
  /// blocked or ignored signals (SIGPIPE, SIGCHLD, ...) must not reach it, so that a crash is a
  /// crash, with its signal. `extra_flags` (e.g. POSIX_SPAWN_SETPGROUP) are set as well.
  bool default_signals(short extra_flags = 0) noexcept;

 private:
  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
  bool ok_ = false;
};

}  // namespace hipacm::backend
