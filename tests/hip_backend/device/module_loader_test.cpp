// SPDX-License-Identifier: MIT
// module_loader_test.cpp - loading without a driver or device fails clearly; real loads need a GPU.
#include <gtest/gtest.h>

#include "hip_backend/device/cuda_driver_api.h"
#include "hip_backend/device/module_loader.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

TEST(ModuleLoader, CudaLoadWithoutADriverIsBackendUnavailable) {
  if (const auto loaded = load_nvrtc(); !loaded)
    GTEST_SKIP() << "NVRTC is not available here: " << loaded.failure().message;
  const Expected<const CudaDriverApi*> driver = load_cuda_driver();
  if (driver) {
    GTEST_SKIP() << "a CUDA driver is present; the device suite covers real loads";
  }
  const std::string error = driver.failure().message;
  const CompileResult compiled = compile_for_target(testing::sample_request("sm_90"));
  ASSERT_EQ(compiled.status, HIPACM_SUCCESS) << compiled.error_message << "\n" << compiled.log;
  const ModuleLoad load = load_module(compiled.code, "sm_90", 0, {"vadd"});
  EXPECT_EQ(load.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(load.module, nullptr);
  EXPECT_NE(load.error.find("CUDA device 0"), std::string::npos) << load.error;
  EXPECT_NE(load.error.find(error), std::string::npos) << load.error;
}

TEST(ModuleLoader, DriverOverrideToAMissingFileNamesIt) {
  const Expected<const CudaDriverApi*> driver = load_cuda_driver();
  if (driver) GTEST_SKIP() << "a CUDA driver was already loaded";
  const std::string& error = driver.failure().message;
  EXPECT_NE(error.find("no CUDA driver"), std::string::npos) << error;
}

TEST(ModuleLoader, HipLoadWithoutADeviceIsBackendUnavailable) {
  const CompileResult& compiled = testing::sample_gfx90a();
  ASSERT_EQ(compiled.status, HIPACM_SUCCESS);
  const ModuleLoad load = load_module(compiled.code, "gfx90a", 0, {"vadd"});
  if (load.status == HIPACM_SUCCESS) GTEST_SKIP() << "an AMD GPU is present; needs no-device host";
  EXPECT_EQ(load.status, HIPACM_ERROR_BACKEND_UNAVAILABLE) << load.error;
  EXPECT_NE(load.error.find("device"), std::string::npos) << load.error;
}

}  // namespace
}  // namespace hipacm::backend
