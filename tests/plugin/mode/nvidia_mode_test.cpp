// SPDX-License-Identifier: MIT
// nvidia_mode_test.cpp - sm_90 modes beside gfx ones in one process, kernel fields, load_device
// without a driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "hip_backend/device/cuda_driver_api.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "test_support.h"

namespace hipacm::test {
namespace {

class NvidiaMode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto loaded = backend::load_nvrtc(); !loaded) {
      GTEST_SKIP() << "NVRTC is not available here: " << loaded.failure().message;
    }
  }
};

std::vector<std::uint8_t> code_of(const hipacm_kernel* k) {
  const auto* bytes = static_cast<const std::uint8_t*>(k->code);
  return {bytes, bytes + k->code_size};
}

std::vector<std::string> function_names_of(const hipacm_kernel* k) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < k->num_functions; ++i) names.emplace_back(k->function_names[i]);
  return names;
}

// Enters a mode for `arch`, compiles vadd plus scale<float>, and checks the
// code object with the platform's own check and the appended kernel fields.
void compile_in_mode(const char* arch) {
  SCOPED_TRACE(arch);
  hipacm_mode_config cfg = config(2);
  cfg.arch = arch;
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  Request request(vadd_source() + kTemplatedSource);
  request.with_name_expressions({"scale<float>"});
  FutureHandle future;
  ASSERT_EQ(hipacm_submit(mode, request.get(), future.out()), HIPACM_SUCCESS);
  const hipacm_kernel* kernel = nullptr;
  ASSERT_EQ(hipacm_future_result(future.f, &kernel), HIPACM_SUCCESS)
      << hipacm_future_error_message(future.f) << "\n"
      << hipacm_future_log(future.f);
  ASSERT_NE(kernel, nullptr);
  EXPECT_STREQ(kernel->arch, arch);
  ASSERT_EQ(kernel->num_lowered_names, 1u);
  const std::string lowered = kernel->lowered_names[0];
  const auto checked = backend::check_code_object(code_of(kernel), arch, {"vadd", lowered});
  EXPECT_TRUE(checked) << checked.failure().message;
  std::vector<std::string> expected = {"vadd", lowered};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(function_names_of(kernel), expected);
  ASSERT_NE(kernel->functions, nullptr);
  for (std::size_t i = 0; i < kernel->num_functions; ++i) EXPECT_EQ(kernel->functions[i], nullptr);
  EXPECT_EQ(kernel->module, nullptr);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS) << hipacm_last_error_message();
}

TEST_F(NvidiaMode, GfxAndSmModesOneAfterTheOther) {
  compile_in_mode("gfx90a");
  compile_in_mode("sm_90");
  compile_in_mode("gfx1030");
  compile_in_mode("compute_90");
}

TEST_F(NvidiaMode, CudaCodeObjectsFailTheAmdCheckAndViceVersa) {
  Request request(vadd_source());
  FutureHandle cuda;
  FutureHandle amd;
  EXPECT_EQ(hipacm_compile(request.get(), "sm_90", cuda.out()), HIPACM_SUCCESS)
      << hipacm_last_error_message();
  EXPECT_EQ(hipacm_compile(request.get(), "gfx90a", amd.out()), HIPACM_SUCCESS)
      << hipacm_last_error_message();
  const hipacm_kernel* cuda_kernel = nullptr;
  const hipacm_kernel* amd_kernel = nullptr;
  ASSERT_EQ(hipacm_future_result(cuda.f, &cuda_kernel), HIPACM_SUCCESS);
  ASSERT_EQ(hipacm_future_result(amd.f, &amd_kernel), HIPACM_SUCCESS);
  EXPECT_FALSE(backend::check_code_object(code_of(cuda_kernel), "gfx90a", {"vadd"}));
  EXPECT_FALSE(backend::check_code_object(code_of(amd_kernel), "sm_90", {"vadd"}));
  EXPECT_EQ(function_names_of(cuda_kernel), std::vector<std::string>{"vadd"});
  EXPECT_EQ(function_names_of(amd_kernel), std::vector<std::string>{"vadd"});
}

TEST_F(NvidiaMode, CompileErrorCarriesTheNvrtcLog) {
  hipacm_mode_config cfg = config(1);
  cfg.arch = "sm_90";
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  Request bad(kStaticAssertSource, "nv-seed");
  FutureHandle future;
  ASSERT_EQ(hipacm_submit(mode, bad.get(), future.out()), HIPACM_SUCCESS);
  EXPECT_EQ(hipacm_future_result(future.f, nullptr), HIPACM_ERROR_COMPILATION);
  EXPECT_NE(std::string(hipacm_future_log(future.f)).find("X must be 2"), std::string::npos)
      << hipacm_future_log(future.f);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_ERROR_COMPILATION);
}

TEST_F(NvidiaMode, UnknownSmArchIsRefusedAtEnterWithTheSupportedList) {
  for (const char* arch : {"sm_1", "sm_90 ", "sm_", "compute_9x", "sm_90:xnack-"}) {
    hipacm_mode_config cfg = config(1);
    cfg.arch = arch;
    hipacm_mode* mode = nullptr;
    EXPECT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_ERROR_INVALID_ARGUMENT) << arch;
    EXPECT_EQ(mode, nullptr);
    EXPECT_NE(std::string(hipacm_last_error_message()).find("sm_90"), std::string::npos)
        << hipacm_last_error_message();
    EXPECT_EQ(hipacm_active_mode(), nullptr);
    Request request(vadd_source());
    hipacm_future* future = nullptr;
    EXPECT_EQ(hipacm_compile(request.get(), arch, &future), HIPACM_ERROR_INVALID_ARGUMENT) << arch;
    EXPECT_EQ(future, nullptr);
  }
}

TEST_F(NvidiaMode, LoadDeviceWithoutADriverEndsTheFutureBackendUnavailable) {
  if (backend::load_cuda_driver()) {
    GTEST_SKIP() << "a CUDA driver is present; real loads are covered by the device suite";
  }
  hipacm_mode_config cfg = config(1);
  cfg.arch = "sm_90";
  cfg.load_device = 0;
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  CallbackCounts counts;
  Request request(vadd_source(), "nv-load");
  request.with_callbacks(count_finalize, count_cleanup, &counts);
  FutureHandle future;
  ASSERT_EQ(hipacm_submit(mode, request.get(), future.out()), HIPACM_SUCCESS);
  const hipacm_kernel* kernel = nullptr;
  EXPECT_EQ(hipacm_future_result(future.f, &kernel), HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(kernel, nullptr);
  const std::string message = hipacm_future_error_message(future.f);
  EXPECT_NE(message.find("CUDA device 0"), std::string::npos) << message;
  EXPECT_NE(message.find("no CUDA driver"), std::string::npos) << message;
  EXPECT_EQ(counts.cleaned.load(), 1);
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_ERROR_BACKEND_UNAVAILABLE);
}

// The AMD half of load_device: same contract, through libamdhip64.
TEST(LoadDevice, GfxWithoutADeviceEndsTheFutureBackendUnavailable) {
  hipacm_mode_config cfg = config(1);
  cfg.load_device = 0;
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS) << hipacm_last_error_message();
  Request request(vadd_source(), "gfx-load");
  FutureHandle future;
  ASSERT_EQ(hipacm_submit(mode, request.get(), future.out()), HIPACM_SUCCESS);
  const hipacm_kernel* kernel = nullptr;
  const hipacm_status status = hipacm_future_result(future.f, &kernel);
  hipacm_mode_exit(mode, nullptr);
  if (status == HIPACM_SUCCESS) {
    ASSERT_NE(kernel, nullptr);
    EXPECT_NE(kernel->module, nullptr);
    ASSERT_EQ(kernel->num_functions, 1u);
    EXPECT_NE(kernel->functions[0], nullptr);
    GTEST_SKIP()
        << "an AMD GPU is present: loaded for real; the no-device path needs a GPU-less host";
  }
  EXPECT_EQ(status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  const std::string message = hipacm_future_error_message(future.f);
  EXPECT_NE(message.find("HIP"), std::string::npos) << message;
  EXPECT_NE(message.find("device"), std::string::npos) << message;
}

TEST_F(NvidiaMode, BackendInfoReportsNvrtcForAnNvidiaDefaultArch) {
  const char* previous = std::getenv("HIPACM_ARCH");
  const std::string saved = previous != nullptr ? previous : "";
  setenv("HIPACM_ARCH", "sm_90", 1);
  hipacm_backend_info info{};
  info.struct_size = sizeof info;
  const hipacm_status status = hipacm_get_backend_info(&info);
  if (previous != nullptr) {
    setenv("HIPACM_ARCH", saved.c_str(), 1);
  } else {
    unsetenv("HIPACM_ARCH");
  }
  ASSERT_EQ(status, HIPACM_SUCCESS) << hipacm_last_error_message();
  EXPECT_STREQ(info.compiler, "nvrtc");
  EXPECT_STREQ(info.default_arch, "sm_90");
  EXPECT_EQ(info.version, backend::load_nvrtc().value()->version);
  EXPECT_NE(std::string(info.library_path).find("libnvrtc"), std::string::npos)
      << info.library_path;
}

}  // namespace
}  // namespace hipacm::test
