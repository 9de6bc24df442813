// SPDX-License-Identifier: MIT
// device_arch_test.cpp - device arch discovery must be silent and crash-free, with or without a
// GPU.
#include "hip_backend/device/device_arch.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "hip_backend/device/device_arch_internal.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::ScopedEnv;

bool have_kfd() { return access("/dev/kfd", F_OK) == 0; }

TEST(DeviceArch, ReportsWhyThereIsNoDeviceOrAValidArch) {
  const Expected<std::string> found = current_device_arch();
  const std::string arch = found ? found.value() : std::string();
  const std::string why = found ? std::string() : found.failure().message;
  if (!have_kfd()) {
    EXPECT_EQ(arch, "");
    EXPECT_EQ(why, "no AMD GPU (/dev/kfd missing)");
    return;
  }
  if (arch.empty()) {
    EXPECT_FALSE(why.empty());
  } else {
    testing::expect_arch_check(arch, true);
  }
}

TEST(DeviceArch, RuntimeQueryIsSilentWithoutAGpu) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const Expected<std::string> found = query_hip_runtime_arch();
  const std::string arch = found ? found.value() : std::string();
  const std::string why = found ? std::string() : found.failure().message;
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  if (!have_kfd()) {
    EXPECT_EQ(arch, "");
    EXPECT_NE(why.find("hipGetDeviceCount"), std::string::npos) << why;
  } else {
    EXPECT_TRUE(!arch.empty() || !why.empty());
  }
}

TEST(DeviceArch, DefaultArchPrefersTheEnvironment) {
  ScopedEnv env("HIPACM_ARCH", std::string("gfx1030"));
  const Expected<std::string> arch = default_arch();
  EXPECT_EQ(arch ? arch.value() : std::string(), "gfx1030");
}

TEST(DeviceArch, DefaultArchExplainsHowToSetOne) {
  if (have_kfd()) GTEST_SKIP() << "this machine may have a GPU";
  for (const std::optional<std::string>& value :
       {std::optional<std::string>(), std::optional<std::string>("")}) {
    ScopedEnv env("HIPACM_ARCH", value);
    const Expected<std::string> arch = default_arch();
    EXPECT_EQ(arch ? arch.value() : std::string(), "");
    const std::string why = arch ? std::string() : arch.failure().message;
    EXPECT_NE(why.find("no target arch"), std::string::npos) << why;
    EXPECT_NE(why.find("hipacm_mode_config.arch"), std::string::npos) << why;
    EXPECT_NE(why.find("HIPACM_ARCH"), std::string::npos) << why;
    EXPECT_NE(why.find("/dev/kfd missing"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace hipacm::backend
