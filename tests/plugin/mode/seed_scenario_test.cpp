// SPDX-License-Identifier: MIT
// seed_scenario_test.cpp - Triton's #9491 scenario: a failing compile must not leave the slot set.
#include <gtest/gtest.h>

#include "test_support.h"

namespace hipacm::test {
namespace {

using SeedScenario = ModeTest;

TEST_F(SeedScenario, FailingCompileResetsSlotAndNextModeCompiles) {
  ASSERT_EQ(enter(2), HIPACM_SUCCESS) << hipacm_last_error_message();
  ASSERT_NE(hipacm_active_mode(), nullptr);
  EXPECT_EQ(hipacm_active_mode(), mode);

  CallbackCounts counts;
  Request bad(kStaticAssertSource, "seed-x1", &counts);
  FutureHandle submitted;
  ASSERT_EQ(hipacm_submit(mode, bad.get(), submitted.out()), HIPACM_SUCCESS);

  hipacm_future* first_failure = nullptr;
  EXPECT_EQ(hipacm_mode_exit(mode, &first_failure), HIPACM_ERROR_COMPILATION);
  FutureHandle failure(first_failure);
  ASSERT_NE(failure.f, nullptr);
  EXPECT_EQ(failure.f, submitted.f);
  EXPECT_STREQ(hipacm_future_key(failure.f), "seed-x1");
  EXPECT_NE(std::string(hipacm_future_log(failure.f)).find("X must be 2"), std::string::npos)
      << hipacm_future_log(failure.f);
  EXPECT_NE(std::string(hipacm_last_error_message()).find("seed-x1"), std::string::npos);
  EXPECT_EQ(std::string(hipacm_last_error_message()).rfind("hipacm_mode_exit: ", 0), 0u)
      << hipacm_last_error_message();
  EXPECT_EQ(hipacm_active_mode(), nullptr);
  EXPECT_EQ(counts.finalized.load(), 0);
  EXPECT_EQ(counts.cleaned.load(), 1);

  // The slot is free: a new mode enters and compiles a good kernel.
  ASSERT_EQ(enter(2), HIPACM_SUCCESS) << hipacm_last_error_message();
  Request good(vadd_source());
  FutureHandle ok;
  ASSERT_EQ(hipacm_submit(mode, good.get(), ok.out()), HIPACM_SUCCESS);
  const hipacm_kernel* kernel = nullptr;
  ASSERT_EQ(hipacm_future_result(ok.f, &kernel), HIPACM_SUCCESS)
      << hipacm_future_error_message(ok.f);
  std::string error;
  EXPECT_TRUE(code_object_ok(kernel, {"vadd"}, &error)) << error;
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
}

TEST_F(SeedScenario, ExitCollectsEveryCompileAfterAFailure) {
  ASSERT_EQ(enter(2), HIPACM_SUCCESS);
  CallbackCounts good_counts, bad_counts;
  std::vector<Request> requests;
  requests.emplace_back(kStaticAssertSource, "", &bad_counts);
  for (int i = 0; i < 3; ++i)
    requests.emplace_back(vadd_source("k" + std::to_string(i)), "", &good_counts);
  std::vector<FutureHandle> futures;
  ASSERT_NO_FATAL_FAILURE(submit_all(requests, &futures));
  hipacm_future* first = nullptr;
  EXPECT_EQ(hipacm_mode_exit(mode, &first), HIPACM_ERROR_COMPILATION);
  FutureHandle hold(first);
  EXPECT_EQ(good_counts.finalized.load(), 3);  // nothing that compiled was thrown away
  EXPECT_EQ(bad_counts.cleaned.load(), 1);
  for (std::size_t i = 1; i < futures.size(); ++i) {
    const hipacm_kernel* k = nullptr;
    ASSERT_EQ(hipacm_future_result(futures[i].f, &k), HIPACM_SUCCESS);
    std::string error;
    EXPECT_TRUE(code_object_ok(k, {"k" + std::to_string(i - 1)}, &error)) << error;
  }
}

}  // namespace
}  // namespace hipacm::test
