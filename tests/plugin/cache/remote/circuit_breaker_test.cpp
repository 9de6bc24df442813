// SPDX-License-Identifier: MIT
// circuit_breaker_test.cpp - CircuitBreaker: closed until `threshold` failures in a row, open for
// its cool-down, then one probe at a time until a success closes it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "plugin/cache/remote/circuit_breaker.h"

namespace hipacm::cache::remote {
namespace {

using std::chrono::milliseconds;

// Long enough that no test step outlasts it by accident.
constexpr milliseconds kForever{3600 * 1000};
// Short enough to wait out; the probe test takes its calls well within it.
constexpr milliseconds kShort{300};

void wait_out(milliseconds cool_down) { std::this_thread::sleep_for(cool_down + milliseconds(50)); }

TEST(CircuitBreaker, OpensAfterThresholdFailuresInARow) {
  CircuitBreaker breaker(3, kForever);
  EXPECT_TRUE(breaker.allow());
  EXPECT_FALSE(breaker.failed());
  EXPECT_FALSE(breaker.failed());
  EXPECT_FALSE(breaker.open());
  EXPECT_TRUE(breaker.allow());
  // The third opens it, and says so once.
  EXPECT_TRUE(breaker.failed());
  EXPECT_TRUE(breaker.open());
  EXPECT_FALSE(breaker.allow());
  EXPECT_FALSE(breaker.allow());
  EXPECT_FALSE(breaker.failed());
  EXPECT_FALSE(breaker.allow());
}

TEST(CircuitBreaker, SuccessResetsTheCount) {
  CircuitBreaker breaker(3, kForever);
  breaker.failed();
  breaker.failed();
  breaker.succeeded();
  EXPECT_FALSE(breaker.failed());
  EXPECT_FALSE(breaker.failed());
  EXPECT_FALSE(breaker.open());
  EXPECT_TRUE(breaker.allow());
}

TEST(CircuitBreaker, HalfOpenLetsOneCallerThrough) {
  CircuitBreaker breaker(1, kShort);
  EXPECT_TRUE(breaker.failed());
  EXPECT_FALSE(breaker.allow());
  wait_out(kShort);
  // Many callers at once after the cool-down: exactly one probes.
  std::atomic<int> allowed{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i)
    callers.emplace_back([&] {
      if (breaker.allow()) ++allowed;
    });
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(allowed.load(), 1);
  EXPECT_TRUE(breaker.open());
}

TEST(CircuitBreaker, ProbeSuccessCloses) {
  CircuitBreaker breaker(2, kShort);
  breaker.failed();
  EXPECT_TRUE(breaker.failed());
  wait_out(kShort);
  ASSERT_TRUE(breaker.allow());
  breaker.succeeded();
  EXPECT_FALSE(breaker.open());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(breaker.allow());
  // Closed means the count starts over: one failure does not reopen a threshold-2 breaker.
  EXPECT_FALSE(breaker.failed());
  EXPECT_TRUE(breaker.allow());
}

TEST(CircuitBreaker, ProbeFailureKeepsItOpen) {
  CircuitBreaker breaker(1, kShort);
  EXPECT_TRUE(breaker.failed());
  wait_out(kShort);
  ASSERT_TRUE(breaker.allow());
  // Already open: not reported again, and closed to everyone for another cool-down.
  EXPECT_FALSE(breaker.failed());
  EXPECT_TRUE(breaker.open());
  EXPECT_FALSE(breaker.allow());
}

}  // namespace
}  // namespace hipacm::cache::remote
