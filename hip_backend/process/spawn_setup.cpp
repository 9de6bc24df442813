// SPDX-License-Identifier: MIT
// spawn_setup.cpp - posix_spawn's attribute and file actions as one object, with the signal
// setting that every process hipacm starts gets.
#include "hip_backend/process/spawn_setup.h"

#include <csignal>

namespace hipacm::backend {

SpawnSetup::SpawnSetup() {
  const bool actions = posix_spawn_file_actions_init(&actions_) == 0;
  const bool attr = posix_spawnattr_init(&attr_) == 0;
  ok_ = actions && attr;
}

SpawnSetup::~SpawnSetup() {
  posix_spawn_file_actions_destroy(&actions_);
  posix_spawnattr_destroy(&attr_);
}

bool SpawnSetup::default_signals(short extra_flags) noexcept {
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  return posix_spawnattr_setsigmask(&attr_, &empty) == 0 &&
         posix_spawnattr_setsigdefault(&attr_, &all) == 0 &&
         posix_spawnattr_setflags(
             &attr_,
             static_cast<short>(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | extra_flags)) == 0;
}

}  // namespace hipacm::backend
