// SPDX-License-Identifier: MIT
// pid_lock.h - a small lock that fork() cannot leave held for ever in the child.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>

namespace hipacm {

/// The owner is a process id: a child, whose only thread is the one that forked, takes over a
/// lock that one of the parent's threads held at the fork (neither libhipacm_intercept.so nor
/// libhipacm's private intercept entry registers an atfork handler for it: libhipacm's fork epoch
/// owns the process's one). Held for short table updates, or while one thread makes what the others
/// wait to share (the intercept entry's compiler), never across a compile.
/// Header-only and constant-initialized, so the shim (which links nothing of hipacm) can use it
/// for namespace-scope locks.
class PidLock {
 public:
  constexpr PidLock() = default;
  void lock() noexcept {
    const pid_t self = getpid();
    for (;;) {
      pid_t owner = 0;
      if (owner_.compare_exchange_weak(owner, self, std::memory_order_acquire)) return;
      if (owner != 0 && owner != self &&
          owner_.compare_exchange_weak(owner, self, std::memory_order_acquire))
        return;
      usleep(20);
    }
  }
  void unlock() noexcept { owner_.store(0, std::memory_order_release); }

 private:
  std::atomic<pid_t> owner_{0};
};

}  // namespace hipacm
