// SPDX-License-Identifier: MIT
// error_policy_test.cpp - fail_fast cancels queued compiles; ignore_errors still runs cleanup.
#include <gtest/gtest.h>

#include "test_support.h"

namespace hipacm::test {
namespace {

using ErrorPolicy = ModeTest;

TEST_F(ErrorPolicy, FailFastCancelsQueuedCompiles) {
  fake().delay_ms = 20;
  fake().fail_marker = "FAIL";
  hipacm_mode_config cfg = config(1);  // one thread: everything after the first is queued
  cfg.fail_fast = 1;
  ASSERT_EQ(enter(cfg), HIPACM_SUCCESS);
  CallbackCounts counts;
  std::vector<Request> requests;
  requests.emplace_back("FAIL first", "bad", &counts);
  for (int i = 0; i < 10; ++i) requests.emplace_back("fine", "good" + std::to_string(i), &counts);
  std::vector<FutureHandle> futures;
  ASSERT_NO_FATAL_FAILURE(submit_all(requests, &futures));
  hipacm_future* first = nullptr;
  EXPECT_EQ(hipacm_mode_exit(mode, &first), HIPACM_ERROR_COMPILATION);
  FutureHandle hold(first);
  EXPECT_STREQ(hipacm_future_key(first), "bad");
  int cancelled = 0;
  for (std::size_t i = 1; i < futures.size(); ++i)
    if (hipacm_future_status(futures[i].f) == HIPACM_ERROR_CANCELLED) ++cancelled;
  EXPECT_GE(cancelled, 9);  // at most one good compile had started
  EXPECT_LE(fake().calls.load(), 2);
  EXPECT_EQ(counts.cleaned.load(), 1 + cancelled);
  EXPECT_EQ(counts.finalized.load() + counts.cleaned.load(), 11);
  EXPECT_NE(std::string(hipacm_future_error_message(futures[5].f)).find("fail_fast"),
            std::string::npos);
}

TEST_F(ErrorPolicy, WithoutFailFastEverythingCompiles) {
  fake().fail_marker = "FAIL";
  ASSERT_EQ(enter(1), HIPACM_SUCCESS);
  CallbackCounts counts;
  std::vector<Request> requests;
  requests.emplace_back("FAIL first", "bad", &counts);
  for (int i = 0; i < 5; ++i) requests.emplace_back("fine", "good" + std::to_string(i), &counts);
  for (auto& r : requests) {
    hipacm_future* f = nullptr;
    ASSERT_EQ(hipacm_submit(mode, r.get(), &f), HIPACM_SUCCESS);
    hipacm_future_release(f);  // exit still collects futures the host let go of
  }
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(fake().calls.load(), 6);
  EXPECT_EQ(counts.finalized.load(), 5);
  EXPECT_EQ(counts.cleaned.load(), 1);
}

TEST_F(ErrorPolicy, IgnoreErrorsSucceedsAndStillCleansUp) {
  hipacm_mode_config cfg = config(2);
  cfg.ignore_errors = 1;
  ASSERT_EQ(enter(cfg), HIPACM_SUCCESS);
  CallbackCounts counts;
  Request bad(kStaticAssertSource, "", &counts);
  Request good(vadd_source(), "", &counts);
  FutureHandle fb, fg;
  ASSERT_EQ(hipacm_submit(mode, bad.get(), fb.out()), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_submit(mode, good.get(), fg.out()), HIPACM_SUCCESS);
  hipacm_future* first = reinterpret_cast<hipacm_future*>(0x1);
  EXPECT_EQ(hipacm_mode_exit(mode, &first), HIPACM_SUCCESS);
  EXPECT_EQ(first, nullptr);
  EXPECT_EQ(counts.cleaned.load(), 1);
  EXPECT_EQ(counts.finalized.load(), 1);
  EXPECT_EQ(hipacm_future_status(fb.f), HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(hipacm_future_status(fg.f), HIPACM_SUCCESS);
}

TEST_F(ErrorPolicy, FinalizeFailureMarksFutureAndRunsCleanup) {
  fake();
  ASSERT_EQ(enter(1), HIPACM_SUCCESS);
  CallbackCounts counts;
  counts.finalize_result = 7;
  Request r("src", "finalize-fails", &counts);
  FutureHandle f;
  ASSERT_EQ(hipacm_submit(mode, r.get(), f.out()), HIPACM_SUCCESS);
  hipacm_future* first = nullptr;
  EXPECT_EQ(hipacm_mode_exit(mode, &first), HIPACM_ERROR_FINALIZE_FAILED);
  FutureHandle hold(first);
  EXPECT_EQ(counts.finalized.load(), 1);
  EXPECT_EQ(counts.cleaned.load(), 1);
  EXPECT_EQ(hipacm_future_result(f.f, nullptr), HIPACM_ERROR_FINALIZE_FAILED);
  EXPECT_EQ(counts.finalized.load(), 1);  // not re-run
  EXPECT_NE(std::string(hipacm_future_error_message(f.f)).find("finalize"), std::string::npos);
}

}  // namespace
}  // namespace hipacm::test
