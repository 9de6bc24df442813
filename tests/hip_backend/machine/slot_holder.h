// SPDX-License-Identifier: MIT
// slot_holder.h - for the machine budget tests: a budget config in a test directory, a child
// process that keeps a budget's only slot, and the held slot the waiter tests start from.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <optional>
#include <string>

#include "hip_backend/machine/machine_budget.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {

/// A budget of `limit` slots whose runtime directory is under `dir`.
inline backend::MachineBudgetConfig config_for(const std::string& dir, unsigned limit) {
  backend::MachineBudgetConfig config;
  config.limit = limit;
  config.runtime_dir = dir + "/run";
  return config;
}

/// A child process that takes the only slot of a budget in `dir` and then stops (as Ctrl-Z
/// stops a host) or, when `stop` is false, sleeps holding it (as a long compile does). The
/// destructor resumes, kills and reaps it.
class SlotHolder {
 public:
  explicit SlotHolder(const std::string& dir, bool stop) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      backend::MachineBudget mine(config_for(dir, 1));
      backend::MachineSlot slot = mine.acquire();
      const char byte = slot.held() ? '+' : '-';
      if (::write(ready[1], &byte, 1) != 1) _exit(1);
      if (stop) ::raise(SIGSTOP);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char byte = 0;
    took_ = ::read(ready[0], &byte, 1) == 1 && byte == '+';
    ::close(ready[0]);
    int status = 0;
    settled_ =
        pid_ > 0 && (!stop || (::waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status)));
  }
  ~SlotHolder() { end(); }
  /// Resumes, kills and reaps it: its slot frees.
  void end() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  SlotHolder(const SlotHolder&) = delete;
  SlotHolder& operator=(const SlotHolder&) = delete;

  bool ready() const { return took_ && settled_; }
  pid_t pid() const { return pid_; }

  /// Whether `future` is ready within a bound that only a stall misses; a stalled one is
  /// released by ending the holder, so that a failing test fails instead of hanging.
  template <class T>
  bool outwaited_by(std::future<T>& future) {
    if (future.wait_for(std::chrono::seconds(30)) == std::future_status::ready) return true;
    end();
    future.wait();
    return false;
  }

 private:
  pid_t pid_ = -1;
  bool took_ = false;
  bool settled_ = false;
};

// A budget of one slot in a fresh directory, the slot kept by a SlotHolder (stopped or not), with
// waits that end after `max_wait` (the default without one), and the log: where each test of a
// waiter behind a holder starts.
struct HeldSlot {
  explicit HeldSlot(bool stopped, std::optional<std::chrono::milliseconds> max_wait = {})
      : holder(dir.path(), stopped), budget(config(dir.path(), max_wait)) {}

  // Waits in the budget, without a deadline, on another thread (so that a stall fails with
  // `stalled` instead of hanging): such a wait ends over the budget, holding nothing and not timed
  // out. The slot it got goes to *slot.
  void expect_wait_goes_over_budget(const char* stalled, backend::MachineSlot* slot) {
    auto waited = std::async(std::launch::async, [&] { return budget.acquire(); });
    ASSERT_TRUE(holder.outwaited_by(waited)) << stalled;
    *slot = waited.get();
    EXPECT_FALSE(slot->held());
    EXPECT_TRUE(slot->over_budget());
    EXPECT_FALSE(slot->timed_out());
  }

  TempDir dir{"hipacm-budget-"};
  SlotHolder holder;
  LogLines log;
  backend::MachineBudget budget;

 private:
  static backend::MachineBudgetConfig config(const std::string& dir,
                                             std::optional<std::chrono::milliseconds> max_wait) {
    backend::MachineBudgetConfig config = config_for(dir, 1);
    if (max_wait) config.max_wait = *max_wait;
    return config;
  }
};

}  // namespace hipacm::test
