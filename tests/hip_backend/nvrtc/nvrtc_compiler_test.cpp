// SPDX-License-Identifier: MIT
// nvrtc_compiler_test.cpp - real NVRTC compiles of HIP sources: CUBIN/PTX checks, names, errors,
// options.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/dispatch/arch_validation.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/dispatch/compiler_identity.h"
#include "hip_backend/dispatch/compiler_inventory.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/nvrtc/nvrtc_compiler.h"
#include "hip_backend/raw_nvrtc.h"
#include "support/libraries/dynamic_library.h"
#include "tests/hip_backend/test_support.h"
#include "tests/temp_dir.h"

namespace hipacm::backend {
namespace {

// An arch check's answer as the status the C ABI reports for it.
hipacm_status status_of(const Expected<void>& checked) {
  return checked ? HIPACM_SUCCESS : checked.failure().status;
}

using testing::sample_request;

class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto loaded = load_nvrtc(); !loaded)
      GTEST_SKIP() << "NVRTC is not available here: " << loaded.failure().message;
  }
};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST_F(Nvrtc, ReportsVersionAndSupportedArchs) {
  const Expected<const NvrtcApi*> loaded = load_nvrtc();
  ASSERT_TRUE(loaded);
  const NvrtcApi* api = loaded.value();
  ASSERT_NE(api, nullptr);
  EXPECT_FALSE(api->version.empty());
  EXPECT_TRUE(std::find(api->supported_archs.begin(), api->supported_archs.end(), 90) !=
              api->supported_archs.end());
  const std::string identity = nvrtc_version_string();
  EXPECT_EQ(identity.rfind("nvrtc " + api->version + " (", 0), 0u) << identity;
  EXPECT_NE(identity.find(api->library_path), std::string::npos) << identity;
}

TEST_F(Nvrtc, InventoryListsBothCompilersAndPicksByArch) {
  const std::vector<CompilerDescription> compilers = describe_compilers();
  ASSERT_EQ(compilers.size(), 2u);
  EXPECT_EQ(compilers[0].name, "hiprtc");
  EXPECT_EQ(compilers[1].name, "nvrtc");
  EXPECT_TRUE(compilers[1].available) << compilers[1].error;
  EXPECT_EQ(compilers[1].version, load_nvrtc().value()->version);
  EXPECT_EQ(describe_compiler_for("sm_90").name, "nvrtc");
  EXPECT_EQ(describe_compiler_for("compute_80").platform, "nvidia");
  EXPECT_EQ(describe_compiler_for("gfx90a").name, "hiprtc");
}

TEST_F(Nvrtc, CompilesSampleToCubinWithKernelsAndLoweredNames) {
  const CompileResult result = compile_for_target(sample_request("sm_90"));
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  const Expected<CodeObjectInfo> read = read_code_object(result.code.data(), result.code.size());
  ASSERT_TRUE(read) << read.failure().message;
  const CodeObjectInfo& info = read.value();
  EXPECT_EQ(info.machine, kElfMachineCuda);
  ASSERT_EQ(result.lowered_names.size(), 1u);
  EXPECT_EQ(result.lowered_names[0], "_Z5scaleIfEvPT_S0_");
  EXPECT_TRUE(contains(info.cuda_kernels, "vadd"));
  EXPECT_TRUE(contains(info.cuda_kernels, result.lowered_names[0]));
  EXPECT_EQ(code_object_kernels(result.code, "sm_90"),
            (std::vector<std::string>{"_Z5scaleIfEvPT_S0_", "vadd"}));
}

TEST_F(Nvrtc, RepeatedNameExpressionsKeepTheRequestOrder) {
  CompileRequest request = sample_request("sm_90");
  request.name_expressions = {"scale<float>", "scale<double>", "scale<float>"};
  const CompileResult result = compile_for_target(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  EXPECT_EQ(
      result.lowered_names,
      (std::vector<std::string>{"_Z5scaleIfEvPT_S0_", "_Z5scaleIdEvPT_S0_", "_Z5scaleIfEvPT_S0_"}));
}

TEST_F(Nvrtc, ComputeArchGivesPtxWithEntries) {
  const CompileResult result = compile_for_target(sample_request("compute_90"));
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  const std::string text(result.code.begin(), result.code.end());
  EXPECT_NE(text.find(".entry vadd"), std::string::npos);
  EXPECT_EQ(result.code.back(), 0u) << "PTX keeps its NUL for cuModuleLoadData";
  EXPECT_EQ(code_object_kernels(result.code, "compute_90"),
            (std::vector<std::string>{"_Z5scaleIfEvPT_S0_", "vadd"}));
  const Expected<void> checked = check_code_object(result.code, "compute_90", {"missing_kernel"});
  EXPECT_FALSE(checked);
  const std::string& error = checked.failure().message;
  EXPECT_NE(error.find("missing_kernel"), std::string::npos) << error;
}

TEST_F(Nvrtc, CompileErrorIsCompilationWithTheLog) {
  CompileRequest request = sample_request("sm_90");
  request.source = "extern \"C\" __global__ void broken(int* p) { p[0] = undefined_thing; }\n";
  request.name_expressions.clear();
  const CompileResult result = compile_for_target(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_NE(result.log.find("undefined_thing"), std::string::npos) << result.log;
  EXPECT_NE(result.error_message.find("NVRTC_ERROR_COMPILATION"), std::string::npos)
      << result.error_message;
  EXPECT_TRUE(result.code.empty());
}

TEST_F(Nvrtc, UnknownArchIsInvalidArgumentListingTheSupportedOnes) {
  const Expected<void> sm_1 = validate_arch("sm_1");
  EXPECT_EQ(status_of(sm_1), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(sm_1.failure().message.find("sm_90"), std::string::npos) << sm_1.failure().message;
  EXPECT_EQ(status_of(validate_arch("sm_")), HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of(validate_arch("sm_90x")), HIPACM_ERROR_INVALID_ARGUMENT);
  for (const char* arch : {"sm_90", "sm_90a", "compute_90"}) {
    const Expected<void> valid = validate_arch(arch);
    EXPECT_EQ(status_of(valid), HIPACM_SUCCESS) << valid.failure().message;
  }
  const CompileResult result = compile_for_target(sample_request("sm_1"));
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(result.error_message.find("supports"), std::string::npos) << result.error_message;
}

TEST_F(Nvrtc, PreludeCoversHipDeviceNames) {
  CompileRequest request;
  request.arch = "sm_90";
  request.source = R"(
#include <hip/hip_runtime.h>
extern "C" __global__ void __launch_bounds__(256) prelude_probe(float* out, int* flags) {
  HIP_DYNAMIC_SHARED(float, scratch)
  const unsigned i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  const unsigned j = hipBlockIdx_y * hipBlockDim_y + hipThreadIdx_y + hipGridDim_x + hipGridDim_y;
  float v = out[i] + static_cast<float>(j + hipThreadIdx_z + hipBlockIdx_z + hipBlockDim_z + hipGridDim_z);
  scratch[hipThreadIdx_x] = v;
  __syncthreads();
  v += __shfl(v, 0) + __shfl_up(v, 1) + __shfl_down(v, 1, 16) + __shfl_xor(v, 2);
  int n = __shfl_down(static_cast<int>(v), 4);
  flags[i] = __any(n > 0) + __all(n > 0) + static_cast<int>(__ballot(n > 0) & 1u) +
             static_cast<int>(__lane_id());
#if defined(__HIP_PLATFORM_NVIDIA__) && defined(__HIP_DEVICE_COMPILE__)
  out[i] = v + scratch[0];
#endif
}
)";
  const CompileResult result = compile_for_target(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  EXPECT_EQ(code_object_kernels(result.code, "sm_90"), std::vector<std::string>{"prelude_probe"});
}

TEST_F(Nvrtc, CallersOwnHipRuntimeHeaderReplacesThePrelude) {
  CompileRequest request;
  request.arch = "sm_90";
  request.headers = {{"hip/hip_runtime.h", "#define HIPACM_OWN_PRELUDE 7\n"}};
  request.source = "extern \"C\" __global__ void own(int* p) { p[0] = HIPACM_OWN_PRELUDE; }\n";
  const CompileResult result = compile_for_target(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
}

TEST(NvrtcOptions, TranslatesHiprtcStyleOptions) {
  const Expected<std::vector<std::string>> translated = translate_options_for_nvrtc(
      {"-O3", "-O0", "-ffast-math", "-DBLOCK_SIZE=256", "-mwavefrontsize64", "-fgpu-rdc", "-g",
       "--gpu-architecture=sm_90", "-std=c++17"},
      "sm_90");
  ASSERT_TRUE(translated) << translated.failure().message;
  EXPECT_EQ(translated.value(),
            (std::vector<std::string>{"--gpu-architecture=sm_90", "--pre-include=hip/hip_runtime.h",
                                      "--use_fast_math", "-DBLOCK_SIZE=256",
                                      "--relocatable-device-code=true", "--generate-line-info",
                                      "-std=c++17"}));
  const auto amd = translate_options_for_nvrtc({"--offload-arch=gfx90a"}, "sm_90");
  EXPECT_FALSE(amd);
  const std::string error = amd ? std::string() : amd.failure().message;
  EXPECT_NE(error.find("conflicts"), std::string::npos) << error;
  EXPECT_FALSE(translate_options_for_nvrtc({"--gpu-architecture=sm_80"}, "sm_90"));
  const auto ptx = translate_options_for_nvrtc({"-arch=compute_90"}, "sm_90");
  EXPECT_TRUE(ptx) << ptx.failure().message;
}

TEST(NvrtcLoader, CandidatesHonourTheOverrideAndCudaHome) {
  {
    testing::ScopedEnv library("HIPACM_NVRTC_LIBRARY", std::string("/opt/x/libnvrtc.so.99"));
    EXPECT_EQ(nvrtc_library_candidates(), std::vector<std::string>{"/opt/x/libnvrtc.so.99"});
  }
  testing::ScopedEnv library("HIPACM_NVRTC_LIBRARY", std::nullopt);
  testing::ScopedEnv home("CUDA_HOME", std::string("/opt/cuda-home"));
  testing::ScopedEnv path("CUDA_PATH", std::nullopt);
  const std::vector<std::string> candidates = nvrtc_library_candidates();
  ASSERT_GE(candidates.size(), 9u);
  EXPECT_EQ(candidates[0], "libnvrtc.so.13");
  EXPECT_EQ(candidates[1], "libnvrtc.so.12");
  EXPECT_EQ(candidates[2], "libnvrtc.so.11");
  EXPECT_EQ(candidates[3], "/opt/cuda-home/lib64/libnvrtc.so.13");
  EXPECT_EQ(candidates.back(), "/usr/local/cuda/lib64/libnvrtc.so.11");
}

TEST(NvrtcLoader, MissingLibraryIsAClearError) {
  const auto loaded = load_nvrtc_from({"/nonexistent/libnvrtc.so.13"});
  EXPECT_FALSE(loaded);
  const std::string error = loaded ? std::string() : loaded.failure().message;
  EXPECT_NE(error.find("cannot open NVRTC"), std::string::npos) << error;
  EXPECT_NE(error.find("HIPACM_NVRTC_LIBRARY"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << error;
  const CompileResult result = compile_with_nvrtc_api(nullptr, error, sample_request("sm_90"));
  EXPECT_EQ(result.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(result.error_message, error);
}

// Run by ctest as its own process with HIPACM_NVRTC_LIBRARY pointing at a
// missing file (nvrtc.missing_library); skipped when run without it.
TEST(NvrtcLoader, OverrideToAMissingFileMakesNvidiaArchsUnavailable) {
  const char* override_path = std::getenv("HIPACM_NVRTC_LIBRARY");
  if (override_path == nullptr || std::string(override_path).find("missing") == std::string::npos) {
    GTEST_SKIP() << "runs only with HIPACM_NVRTC_LIBRARY set to a missing file (ctest does that)";
  }
  const Expected<void> valid = validate_arch("sm_90");
  EXPECT_EQ(status_of(valid), HIPACM_ERROR_BACKEND_UNAVAILABLE);
  const std::string& error = valid.failure().message;
  EXPECT_NE(error.find(override_path), std::string::npos) << error;
  const CompileResult result = compile_for_target(sample_request("sm_90"));
  EXPECT_EQ(result.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(result.error_message.find("cannot open NVRTC"), std::string::npos)
      << result.error_message;
  EXPECT_EQ(nvrtc_version_string(), "nvrtc unavailable");
}

TEST(RawNvrtcMarker, NamesTheFileItWasMadeForAndNothingElse) {
  EXPECT_EQ(raw_nvrtc_library({raw_nvrtc_option("/opt/cuda/lib64/libnvrtc.so.13")}),
            "/opt/cuda/lib64/libnvrtc.so.13");
  EXPECT_EQ(raw_nvrtc_library({raw_nvrtc_option("/a"), "-arch=sm_90"}), "/a");
  const std::string marker(kRawNvrtcOption);
  // Read from a request: anything but the hex of an absolute path names no file.
  for (const std::string& bad :
       {marker, marker + "2", marker + "2f6", marker + "2F61", marker + "2g", marker + "2f0061",
        raw_nvrtc_option("relative/libnvrtc.so"), std::string("-arch=sm_90")})
    EXPECT_EQ(raw_nvrtc_library({bad}), "") << bad;
  EXPECT_EQ(raw_nvrtc_library({}), "");
  EXPECT_EQ(raw_nvrtc_library({marker + std::string(2 * 4097, 'a')}), "");
}

// A CUDA program's own compile (`hipacm run`) uses the NVRTC file its marker names.
TEST_F(Nvrtc, RawRequestCompilesWithTheFileItsMarkerNames) {
  const std::string file = real_file_path(load_nvrtc().value()->library_path);
  const Expected<const NvrtcApi*> loaded = load_nvrtc_file(file);
  ASSERT_TRUE(loaded) << loaded.failure().message;
  EXPECT_EQ(loaded.value()->version, load_nvrtc().value()->version);
  EXPECT_EQ(load_nvrtc_file(file).value(), loaded.value()) << "loaded once per file";
  const CompilerIdentity identity = raw_nvrtc_identity(file);
  EXPECT_EQ(identity.version, "nvrtc " + loaded.value()->version + " (" + file + ")");

  CompileRequest request;
  request.source = "extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\n";
  request.source_name = "k.cu";
  request.arch = "sm_90";
  request.options = {raw_nvrtc_option(file), "-arch=sm_90"};
  const CompileResult served = compile_with_nvrtc(request);
  ASSERT_EQ(served.status, HIPACM_SUCCESS) << served.error_message << "\n" << served.log;
  EXPECT_EQ(code_object_kernels(served.code, "sm_90"), std::vector<std::string>{"k"});

  // Its NVRTC judges the arch: an arch NVRTC rejects is NVRTC's invalid option, with its log.
  request.options = {raw_nvrtc_option(file), "-arch=sm_1"};
  const CompileResult rejected = compile_with_nvrtc(request);
  EXPECT_EQ(rejected.status, HIPACM_ERROR_COMPILATION) << rejected.error_message;
  EXPECT_NE(rejected.error_message.find("NVRTC_ERROR_INVALID_OPTION"), std::string::npos)
      << rejected.error_message;

  request.options = {raw_nvrtc_option("/nonexistent/libnvrtc.so.13"), "-arch=sm_90"};
  const CompileResult missing = compile_with_nvrtc(request);
  EXPECT_EQ(missing.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(missing.error_message.find("/nonexistent/libnvrtc.so.13"), std::string::npos)
      << missing.error_message;
}

// A worker runs the code of the file a request names: only files that no other user can change.
TEST(NvrtcLoader, TheFileARequestNamesMustBeAnNvrtcNoOneElseCanChange) {
  const test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string file = dir.path() + "/libnvrtc.so.13";
  std::ofstream(file) << "not a library";
  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);
  const auto writable = load_nvrtc_file(file);
  ASSERT_FALSE(writable);
  EXPECT_EQ(writable.failure().status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_NE(writable.failure().message.find("writable by others"), std::string::npos)
      << writable.failure().message;
  EXPECT_TRUE(raw_nvrtc_identity(file).version.empty());

  ASSERT_EQ(::chmod(file.c_str(), 0644), 0);
  const auto not_nvrtc = load_nvrtc_file(file);
  ASSERT_FALSE(not_nvrtc);
  EXPECT_NE(not_nvrtc.failure().message.find(file), std::string::npos)
      << not_nvrtc.failure().message;

  for (const std::string& bad : {dir.path(), dir.path() + "/missing.so", std::string("rel.so")}) {
    const auto refused = load_nvrtc_file(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.failure().message.find("not a"), std::string::npos)
        << refused.failure().message;
  }
}

}  // namespace
}  // namespace hipacm::backend
