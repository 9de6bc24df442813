// SPDX-License-Identifier: MIT
// exit_race_test.cpp - exit racing submits, nested modes from callbacks, exit racing exit.
#include <gtest/gtest.h>

#include <boost/thread/barrier.hpp>
#include <boost/thread/thread.hpp>

#include <dirent.h>

#include "plugin/mode/future_registry.h"
#include "test_support.h"

namespace hipacm::test {
namespace {

using ExitRace = ModeTest;

TEST_F(ExitRace, EverySuccessfulSubmitIsCollectedExactlyOnce) {
  fake().delay_ms = 1;
  constexpr int kSubmitters = 4;
  for (int iteration = 0; iteration < 60 && !HasFailure(); ++iteration) {
    ASSERT_EQ(enter(2), HIPACM_SUCCESS);
    CallbackCounts counts;
    std::atomic<int> accepted{0}, closed{0}, other{0};
    boost::barrier start(kSubmitters + 1);
    std::vector<boost::thread> threads;
    for (int t = 0; t < kSubmitters; ++t) {
      threads.emplace_back([&, t] {
        start.wait();
        // After kMaxNew distinct keys a thread keeps hitting its first key
        // (a dedup hit, no new compile) so the run stays short but the
        // submits still race the exit.
        constexpr int kMaxNew = 40;
        for (int i = 0;; ++i) {
          const bool fresh = i < kMaxNew;
          Request r("src", "t" + std::to_string(t) + "-" + std::to_string(fresh ? i : 0), &counts);
          hipacm_future* f = nullptr;
          const hipacm_status s = hipacm_submit(mode, r.get(), &f);
          if (s == HIPACM_SUCCESS) {
            if (fresh) accepted.fetch_add(1);
            hipacm_future_release(f);
          } else {
            (s == HIPACM_ERROR_MODE_CLOSED ? closed : other).fetch_add(1);
            return;  // the mode is gone; later submits must fail the same way
          }
        }
      });
    }
    start.wait();
    boost::this_thread::sleep_for(boost::chrono::milliseconds(iteration % 5));
    EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
    for (auto& th : threads) th.join();
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(closed.load(), kSubmitters);
    EXPECT_EQ(counts.finalized.load(), accepted.load());
    EXPECT_EQ(counts.cleaned.load(), 0);
    EXPECT_EQ(live_future_count(), 0u);
  }
}

TEST_F(ExitRace, SubmitAfterExitIsModeClosed) {
  fake();
  ASSERT_EQ(enter(1), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  Request r("src");
  hipacm_future* f = reinterpret_cast<hipacm_future*>(0x1);
  EXPECT_EQ(hipacm_submit(mode, r.get(), &f), HIPACM_ERROR_MODE_CLOSED);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
}

TEST_F(ExitRace, TwoThreadsExitOneModeExactlyOneWins) {
  fake().delay_ms = 1;
  for (int iteration = 0; iteration < 100 && !HasFailure(); ++iteration) {
    ASSERT_EQ(enter(2), HIPACM_SUCCESS);
    CallbackCounts counts;
    Request r("src", "k", &counts);
    FutureHandle f;
    ASSERT_EQ(hipacm_submit(mode, r.get(), f.out()), HIPACM_SUCCESS);
    hipacm_status a = HIPACM_ERROR_INTERNAL, b = HIPACM_ERROR_INTERNAL;
    boost::barrier start(2);
    boost::thread t1([&] {
      start.wait();
      a = hipacm_mode_exit(mode, nullptr);
    });
    boost::thread t2([&] {
      start.wait();
      b = hipacm_mode_exit(mode, nullptr);
    });
    t1.join();
    t2.join();
    EXPECT_TRUE((a == HIPACM_SUCCESS) != (b == HIPACM_SUCCESS)) << a << " " << b;
    EXPECT_TRUE(a == HIPACM_ERROR_INVALID_ARGUMENT || b == HIPACM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(counts.finalized.load(), 1);
    EXPECT_EQ(hipacm_active_mode(), nullptr);
  }
}

std::size_t thread_count() {
  std::size_t n = 0;
  for (DIR* d = opendir("/proc/self/task"); d != nullptr;) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
    break;
  }
  return n;
}

TEST_F(ExitRace, ExitJoinsEveryPoolThread) {
  fake().delay_ms = 5;
  // Iteration 0 is a warm-up: runtimes may start one permanent thread of
  // their own at the first thread creation (ThreadSanitizer does).
  std::size_t before = 0;
  for (int iteration = 0; iteration < 21; ++iteration) {
    if (iteration == 1) before = thread_count();
    ASSERT_EQ(enter(4), HIPACM_SUCCESS);
    for (int i = 0; i < 8; ++i) {
      Request r("src", "k" + std::to_string(i));
      hipacm_future* f = nullptr;
      ASSERT_EQ(hipacm_submit(mode, r.get(), &f), HIPACM_SUCCESS);
      hipacm_future_release(f);
    }
    if (iteration > 0) {
      EXPECT_GT(thread_count(), before);  // the pool really ran threads
    }
    ASSERT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
    if (iteration == 0) continue;
    // pthread_join returns once a thread has finished, but the kernel may
    // list its task for a moment longer; a leaked thread never leaves.
    for (int wait = 0; wait < 200 && thread_count() != before; ++wait)
      boost::this_thread::sleep_for(boost::chrono::milliseconds(10));
    EXPECT_EQ(thread_count(), before) << "iteration " << iteration;
  }
  EXPECT_EQ(live_future_count(), 0u);
}

TEST_F(ExitRace, RefusedEnterStartsNoThread) {
  const hipacm_mode_config cfg = config(4);
  ASSERT_EQ(enter(cfg), HIPACM_SUCCESS);
  const std::size_t before = thread_count();
  hipacm_mode* second = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &second), HIPACM_ERROR_MODE_ALREADY_ACTIVE);
  EXPECT_EQ(thread_count(), before);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
}

struct Nested {
  std::atomic<int> entered{0};
  std::atomic<int> exited_ok{0};
  std::atomic<int> saw_null_slot{0};
};

int finalize_enters_nested_mode(void* user, hipacm_future*) {
  auto* n = static_cast<Nested*>(user);
  if (hipacm_active_mode() == nullptr) n->saw_null_slot.fetch_add(1);
  hipacm_mode_config cfg = config(1);
  hipacm_mode* inner = nullptr;
  if (hipacm_mode_enter(&cfg, &inner) != HIPACM_SUCCESS) return 1;
  n->entered.fetch_add(1);
  hipacm::test::Request r("nested src", "nested");
  hipacm_future* f = nullptr;
  if (hipacm_submit(inner, r.get(), &f) != HIPACM_SUCCESS) return 1;
  hipacm_future_release(f);
  if (hipacm_mode_exit(inner, nullptr) == HIPACM_SUCCESS) n->exited_ok.fetch_add(1);
  return 0;
}

TEST_F(ExitRace, CallbackEntersAndExitsANestedModeDuringExit) {
  fake();
  ASSERT_EQ(enter(2), HIPACM_SUCCESS);
  Nested nested;
  Request r("outer src", "outer");
  r.with_callbacks(finalize_enters_nested_mode, nullptr, &nested);
  FutureHandle f;
  ASSERT_EQ(hipacm_submit(mode, r.get(), f.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_future_wait(f.f, -1), HIPACM_SUCCESS);  // done, callback not yet run
  EXPECT_EQ(nested.entered.load(), 0);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_EQ(nested.saw_null_slot.load(), 1);
  EXPECT_EQ(nested.entered.load(), 1);
  EXPECT_EQ(nested.exited_ok.load(), 1);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
  EXPECT_EQ(fake().calls.load(), 2);
}

}  // namespace
}  // namespace hipacm::test
