// SPDX-License-Identifier: MIT
// sigpipe_guard.h - keeps a write into a socket whose peer is gone from raising SIGPIPE on the
// calling thread, whose default action would kill the host process.
#pragma once

#include <pthread.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace hipacm::cache::remote {

/// hiredis writes with write(2), not send(MSG_NOSIGNAL), and a host need not ignore SIGPIPE.
/// While a guard lives, SIGPIPE is blocked on this thread; one raised meanwhile (thread-directed,
/// so it pends here) is taken back before the old mask returns. One that was already pending
/// before is left for its owner.
class SigpipeGuard {
 public:
  SigpipeGuard() noexcept {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeGuard() {
    if (!blocked_) return;
    const int saved_errno = errno;
    sigset_t pending;
    sigemptyset(&pending);
    if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    errno = saved_errno;
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
  bool blocked_ = false;
};

}  // namespace hipacm::cache::remote
