// SPDX-License-Identifier: MIT
// isolation_policy_test.cpp - AUTO falls back to in-process without a worker; PROCESS refuses
// clearly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.h"
#include "tests/scoped_env.h"

namespace hipacm::test {
namespace {

TEST(IsolationPolicy, ProcessWithoutWorkerIsBackendUnavailable) {
  ScopedEnv worker("HIPACM_WORKER", "/nonexistent/hipacm-worker");
  ScopedEnv isolation("HIPACM_ISOLATION", "auto");
  hipacm_mode_config cfg = config(1);
  cfg.isolation = HIPACM_ISOLATION_PROCESS;
  hipacm_mode* mode = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(mode, nullptr);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
  const std::string message = hipacm_last_error_message();
  EXPECT_NE(message.find("hipacm-worker"), std::string::npos) << message;
  EXPECT_NE(message.find("HIPACM_WORKER"), std::string::npos) << message;
}

TEST(IsolationPolicy, AutoWithoutWorkerFallsBackWithOneWarningAndCompiles) {
  ScopedEnv worker("HIPACM_WORKER", "/nonexistent/hipacm-worker");
  ScopedEnv isolation("HIPACM_ISOLATION", "auto");
  ScopedEnv log("HIPACM_LOG", "warning");
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    hipacm_mode_config cfg = config(1);
    hipacm_mode* mode = nullptr;
    ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
    Request r(vadd_source("fallback" + std::to_string(i)));
    FutureHandle f;
    ASSERT_EQ(hipacm_submit(mode, r.get(), f.out()), HIPACM_SUCCESS);
    const hipacm_kernel* k = nullptr;
    EXPECT_EQ(hipacm_future_result(f.f, &k), HIPACM_SUCCESS) << hipacm_future_error_message(f.f);
    EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  // The warning is logged once per process: an earlier test in the same
  // process may already have logged it, so two modes here print at most one.
  const std::string warning = "hipacm: warning: hipacm-worker not found";
  const auto first = err.find(warning);
  if (first != std::string::npos) {
    EXPECT_EQ(err.find(warning, first + 1), std::string::npos)
        << "the fallback warning must be logged once per process:\n"
        << err;
  }
}

TEST(IsolationPolicy, BadValuesAreInvalidArguments) {
  hipacm_mode_config cfg = config(1);
  cfg.isolation = 7;
  hipacm_mode* mode = nullptr;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipacm_last_error_message()).find("isolation"), std::string::npos);
  ScopedEnv isolation("HIPACM_ISOLATION", "sometimes");
  cfg.isolation = HIPACM_ISOLATION_AUTO;
  EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hipacm_last_error_message()).find("HIPACM_ISOLATION"), std::string::npos);
  EXPECT_EQ(hipacm_active_mode(), nullptr);
}

}  // namespace
}  // namespace hipacm::test
