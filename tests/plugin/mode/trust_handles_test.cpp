// SPDX-License-Identifier: MIT
// trust_handles_test.cpp - released futures and exited modes never act on other objects; long
// waits.
#include <gtest/gtest.h>

#include <boost/thread/thread.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "plugin/mode/future_registry.h"
#include "test_support.h"

namespace hipacm::test {
namespace {

// A completed future with a single reference: the fake compile step of
// hipacm_compile, so the allocator sees the same object size every time.
hipacm_future* compiled_future(int n) {
  Request r("fake source " + std::to_string(n));
  hipacm_future* f = nullptr;
  EXPECT_EQ(hipacm_compile(r.get(), kArch, &f), HIPACM_SUCCESS) << hipacm_last_error_message();
  return f;
}

// Every entry point on a released handle is INVALID_ARGUMENT (or "" for the
// string getters), and none of them touches a live future.
void expect_stale(hipacm_future* stale) {
  const hipacm_kernel* kernel = nullptr;
  EXPECT_EQ(hipacm_future_status(stale), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_wait(stale, 0), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_result(stale, &kernel), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(kernel, nullptr);
  EXPECT_STREQ(hipacm_future_key(stale), "");
  EXPECT_STREQ(hipacm_future_log(stale), "");
  EXPECT_STREQ(hipacm_future_error_message(stale), "");
  EXPECT_EQ(hipacm_future_retain(stale), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_release(stale), HIPACM_ERROR_INVALID_ARGUMENT);
}

// The future's only reference is intact: its kernel is still readable.
void expect_kernel_readable(hipacm_future* f) {
  const hipacm_kernel* kernel = nullptr;
  ASSERT_EQ(hipacm_future_result(f, &kernel), HIPACM_SUCCESS) << hipacm_last_error_message();
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(kernel->code_size, 4u);
  EXPECT_EQ(std::memcmp(kernel->code,
                        "\x7f"
                        "ELF",
                        4),
            0);
}

TEST(Trust11_StaleFutureHandle, ReleasedHandleNeverNamesANewFuture) {
  ScopedFakeCompiler scoped(std::make_shared<FakeCompiler>());
  const std::size_t live_before = live_future_count();
  for (int round = 0; round < 200; ++round) {
    hipacm_future* stale = compiled_future(-1);
    ASSERT_NE(stale, nullptr);
    ASSERT_EQ(hipacm_future_release(stale), HIPACM_SUCCESS);
    // Same-sized allocations right after a free: an address-based handle
    // would come straight back here.
    std::vector<hipacm_future*> fresh;
    for (int i = 0; i < 8; ++i) {
      fresh.push_back(compiled_future(i));
      ASSERT_NE(fresh.back(), nullptr);
      ASSERT_NE(fresh.back(), stale) << "round " << round << ": a released handle was reissued";
    }
    expect_stale(stale);
    for (hipacm_future* f : fresh) {
      expect_kernel_readable(f);
      EXPECT_EQ(hipacm_future_release(f), HIPACM_SUCCESS);
    }
    ASSERT_EQ(live_future_count(), live_before) << "round " << round;
  }
}

TEST(Trust11_StaleFutureHandle, FutureHandleIsNeverAModeHandle) {
  auto fake = std::make_shared<FakeCompiler>();
  ScopedFakeCompiler scoped(fake);
  hipacm_mode_config cfg = config(1);
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  Request r("src");
  FutureHandle f;
  ASSERT_EQ(hipacm_submit(mode, r.get(), f.out()), HIPACM_SUCCESS);
  auto* future_as_mode = reinterpret_cast<hipacm_mode*>(f.f);
  auto* mode_as_future = reinterpret_cast<hipacm_future*>(mode);
  FutureHandle none;
  EXPECT_EQ(hipacm_submit(future_as_mode, r.get(), none.out()), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_mode_exit(future_as_mode, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_future_release(mode_as_future), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(hipacm_active_mode(), mode);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_future_status(f.f), HIPACM_SUCCESS);
}

TEST(Trust11_StaleFutureHandle, CallbackSeesTheHostsHandle) {
  ScopedFakeCompiler scoped(std::make_shared<FakeCompiler>());
  struct Seen {
    hipacm_future* f = nullptr;
    hipacm_status result = HIPACM_ERROR_INTERNAL;
  } seen;
  auto finalize = [](void* user, hipacm_future* f) {
    auto* s = static_cast<Seen*>(user);
    s->f = f;
    s->result = hipacm_future_result(f, nullptr);
    return 0;
  };
  hipacm_mode_config cfg = config(1);
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  Request r("src");
  r.with_callbacks(finalize, nullptr, &seen);
  FutureHandle f;
  ASSERT_EQ(hipacm_submit(mode, r.get(), f.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(seen.f, f.f);
  EXPECT_EQ(seen.result, HIPACM_SUCCESS);
}

TEST(Trust11_StaleModeHandle, ExitedHandleNeverExitsANewerMode) {
  ScopedFakeCompiler scoped(std::make_shared<FakeCompiler>());
  hipacm_mode_config cfg = config(1);
  for (int round = 0; round < 200; ++round) {
    hipacm_mode* old_mode = nullptr;
    ASSERT_EQ(hipacm_mode_enter(&cfg, &old_mode), HIPACM_SUCCESS) << hipacm_last_error_message();
    ASSERT_EQ(hipacm_mode_exit(old_mode, nullptr), HIPACM_SUCCESS);
    hipacm_mode* new_mode = nullptr;
    ASSERT_EQ(hipacm_mode_enter(&cfg, &new_mode), HIPACM_SUCCESS) << hipacm_last_error_message();
    ASSERT_NE(new_mode, old_mode) << "round " << round << ": an exited handle was reissued";

    EXPECT_EQ(hipacm_mode_exit(old_mode, nullptr), HIPACM_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(hipacm_active_mode(), new_mode) << "the stale exit touched the newer mode";
    Request r("src " + std::to_string(round));
    FutureHandle closed, open;
    EXPECT_EQ(hipacm_submit(old_mode, r.get(), closed.out()), HIPACM_ERROR_MODE_CLOSED);
    EXPECT_EQ(closed.f, nullptr);
    EXPECT_EQ(hipacm_submit(new_mode, r.get(), open.out()), HIPACM_SUCCESS);
    ASSERT_EQ(hipacm_mode_exit(new_mode, nullptr), HIPACM_SUCCESS);
    EXPECT_EQ(hipacm_future_status(open.f), HIPACM_SUCCESS);
  }
}

TEST(Trust11_StaleFutureHandle, ManyThreadsNeverActOnAnotherThreadsFuture) {
  ScopedFakeCompiler scoped(std::make_shared<FakeCompiler>());
  const std::size_t live_before = live_future_count();
  constexpr int kThreads = 8;
  constexpr int kRounds = 300;
  std::vector<std::vector<std::uintptr_t>> issued(kThreads);
  std::atomic<int> wrong{0};
  std::vector<boost::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &issued, &wrong] {
      for (int i = 0; i < kRounds; ++i) {
        hipacm_future* f = nullptr;
        Request r("fake source " + std::to_string(t));
        if (hipacm_compile(r.get(), kArch, &f) != HIPACM_SUCCESS || f == nullptr) {
          wrong.fetch_add(1);
          continue;
        }
        issued[t].push_back(reinterpret_cast<std::uintptr_t>(f));
        const hipacm_kernel* kernel = nullptr;
        if (hipacm_future_result(f, &kernel) != HIPACM_SUCCESS || kernel->code_size != 4)
          wrong.fetch_add(1);
        if (hipacm_future_release(f) != HIPACM_SUCCESS) wrong.fetch_add(1);
        // Other threads allocate futures meanwhile; a second release of the
        // stale handle must never drop one of their references.
        if (hipacm_future_release(f) != HIPACM_ERROR_INVALID_ARGUMENT) wrong.fetch_add(1);
        if (hipacm_future_status(f) != HIPACM_ERROR_INVALID_ARGUMENT) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  std::set<std::uintptr_t> distinct;
  std::size_t total = 0;
  for (const auto& values : issued) {
    distinct.insert(values.begin(), values.end());
    total += values.size();
  }
  EXPECT_EQ(total, std::size_t{kThreads} * kRounds);
  EXPECT_EQ(distinct.size(), total) << "a handle value was issued twice";
  EXPECT_EQ(live_future_count(), live_before);
}

TEST(Trust11_StaleModeHandle, StaleExitsRacingEnterExitNeverExitTheLiveMode) {
  ScopedFakeCompiler scoped(std::make_shared<FakeCompiler>());
  hipacm_mode_config cfg = config(1);
  // Exited handles, for the other threads to exit again.
  std::vector<hipacm_mode*> exited;
  for (int i = 0; i < 4; ++i) {
    hipacm_mode* m = nullptr;
    ASSERT_EQ(hipacm_mode_enter(&cfg, &m), HIPACM_SUCCESS) << hipacm_last_error_message();
    ASSERT_EQ(hipacm_mode_exit(m, nullptr), HIPACM_SUCCESS);
    exited.push_back(m);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::vector<boost::thread> attackers;
  for (hipacm_mode* stale : exited) {
    attackers.emplace_back([stale, &stop, &wrong] {
      while (!stop.load(std::memory_order_acquire))
        if (hipacm_mode_exit(stale, nullptr) != HIPACM_ERROR_INVALID_ARGUMENT) wrong.fetch_add(1);
    });
  }
  int owner_failures = 0;
  for (int round = 0; round < 300; ++round) {
    hipacm_mode* m = nullptr;
    if (hipacm_mode_enter(&cfg, &m) != HIPACM_SUCCESS) {
      ++owner_failures;
      continue;
    }
    if (std::find(exited.begin(), exited.end(), m) != exited.end()) ++owner_failures;
    if (hipacm_active_mode() != m) ++owner_failures;
    if (hipacm_mode_exit(m, nullptr) != HIPACM_SUCCESS) ++owner_failures;
  }
  stop.store(true, std::memory_order_release);
  for (auto& th : attackers) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(owner_failures, 0);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
}

// A timeout the clock cannot add to "now" means forever: the wait returns
// SUCCESS once the (slow) compile completes, never NOT_READY at once.
TEST(Trust12_LongWaits, HugeTimeoutsWaitForTheCompile) {
  auto fake = std::make_shared<FakeCompiler>();
  fake->delay_ms = 300;
  ScopedFakeCompiler scoped(fake);
  const std::int64_t huge[] = {
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max() - 1,
      std::numeric_limits<std::int64_t>::max() / 2,
      std::int64_t{10'000'000'000'000},  // 317 years: overflows nanoseconds
  };
  hipacm_mode_config cfg = config(4);
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  std::vector<FutureHandle> futures;
  for (std::int64_t timeout : huge) {
    Request r("slow source " + std::to_string(timeout));
    futures.emplace_back();
    ASSERT_EQ(hipacm_submit(mode, r.get(), futures.back().out()), HIPACM_SUCCESS);
  }
  for (std::size_t i = 0; i < futures.size(); ++i) {
    EXPECT_EQ(hipacm_future_wait(futures[i].f, huge[i]), HIPACM_SUCCESS)
        << "timeout " << huge[i] << ": " << hipacm_last_error_message();
    EXPECT_EQ(hipacm_future_status(futures[i].f), HIPACM_SUCCESS) << "timeout " << huge[i];
  }
  // A short finite timeout still times out on a pending compile.
  Request late("slow source, short wait");
  FutureHandle pending;
  ASSERT_EQ(hipacm_submit(mode, late.get(), pending.out()), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_future_wait(pending.f, 1), HIPACM_ERROR_NOT_READY);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(fake->calls.load(), 5);
}

}  // namespace
}  // namespace hipacm::test
