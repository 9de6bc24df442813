// SPDX-License-Identifier: MIT
// dedup_test.cpp - atomic dedup and exactly-once callbacks under contention.
#include <gtest/gtest.h>

#include <boost/thread/barrier.hpp>
#include <boost/thread/thread.hpp>

#include "plugin/mode/future_registry.h"
#include "test_support.h"

namespace hipacm::test {
namespace {

constexpr int kThreads = 8;

// One iteration: 8 threads submit one key, then 8 threads call result while
// the main thread exits. One compile, one future, one finalize.
void contend_once(FakeCompiler& fake, bool real_source) {
  const int calls_before = fake.calls.load();
  const hipacm_mode_config cfg = config(2);
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();

  CallbackCounts counts;
  std::vector<hipacm_future*> got(kThreads, nullptr);
  std::vector<hipacm_status> submit_status(kThreads, HIPACM_ERROR_INTERNAL);
  std::vector<hipacm_status> result_status(kThreads, HIPACM_ERROR_INTERNAL);
  boost::barrier start(kThreads);
  boost::barrier collect(kThreads + 1);
  std::vector<boost::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Request r(real_source ? vadd_source() : "fake source", "the-one-key", &counts);
      start.wait();
      submit_status[t] = hipacm_submit(mode, r.get(), &got[t]);
      collect.wait();
      result_status[t] = hipacm_future_result(got[t], nullptr);
    });
  }
  collect.wait();
  const hipacm_status exit_status = hipacm_mode_exit(mode, nullptr);
  for (auto& th : threads) th.join();

  EXPECT_EQ(exit_status, HIPACM_SUCCESS);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(submit_status[t], HIPACM_SUCCESS);
    EXPECT_EQ(got[t], got[0]) << "thread " << t << " got a different future";
    EXPECT_EQ(result_status[t], HIPACM_SUCCESS);
  }
  EXPECT_EQ(fake.calls.load() - calls_before, 1);
  EXPECT_EQ(counts.finalized.load(), 1);
  EXPECT_EQ(counts.cleaned.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(hipacm_future_release(got[t]), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_future_status(got[0]), HIPACM_ERROR_INVALID_ARGUMENT);  // last ref gone
}

using Dedup = ModeTest;

TEST_F(Dedup, EightThreadsOneKeyOneRealCompile) {
  fake().real = true;
  contend_once(fake(), true);
}

TEST_F(Dedup, ManyIterationsWithSlowCompiles) {
  fake().delay_ms = 2;
  for (int i = 0; i < 200 && !HasFailure(); ++i) contend_once(fake(), false);
  EXPECT_EQ(live_future_count(), 0u);
}

TEST_F(Dedup, SecondSubmitKeepsFirstCallbacks) {
  fake();
  ASSERT_EQ(enter(1), HIPACM_SUCCESS);
  CallbackCounts first, second;
  Request a("src", "k", &first);
  Request b("other src", "k", &second);
  FutureHandle fa, fb;
  ASSERT_EQ(hipacm_submit(mode, a.get(), fa.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_submit(mode, b.get(), fb.out()), HIPACM_SUCCESS);
  EXPECT_EQ(fa.f, fb.f);
  ASSERT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(first.finalized.load(), 1);
  EXPECT_EQ(second.finalized.load(), 0);
  EXPECT_EQ(fake().calls.load(), 1);
}

TEST_F(Dedup, DefaultKeyIsAContentDigest) {
  fake();
  ASSERT_EQ(enter(1), HIPACM_SUCCESS);
  Request a("same"), b("same"), c("different");
  Request d("same");
  d.with_options({"-O3"});
  FutureHandle fa, fb, fc, fd;
  ASSERT_EQ(hipacm_submit(mode, a.get(), fa.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_submit(mode, b.get(), fb.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_submit(mode, c.get(), fc.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_submit(mode, d.get(), fd.out()), HIPACM_SUCCESS);
  EXPECT_EQ(fa.f, fb.f);
  EXPECT_NE(fa.f, fc.f);
  EXPECT_NE(fa.f, fd.f);
  EXPECT_EQ(std::string(hipacm_future_key(fa.f)).rfind("sha256:", 0), 0u);
  EXPECT_EQ(std::string(hipacm_future_key(fa.f)).size(), 7u + 64u);
  ASSERT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(fake().calls.load(), 3);
}

}  // namespace
}  // namespace hipacm::test
