// SPDX-License-Identifier: MIT
// intercept_entry_nvrtc_test.cpp - the private entry's raw NVRTC requests against plain NVRTC in
// the same process: the same CUBIN, lowered names, result codes and failure logs; an AMD arch or
// another NVRTC file passes through.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugin/abi/intercept_abi.h"
#include "tests/plugin/abi/intercept_entry_support.h"

namespace {

using hipacm::test::Plain;
using hipacm::test::Result;

struct Nvrtc : hipacm::test::RtcCalls {
  std::string file;  // the library's file, as the shim would name it
};

// NVRTC 13 or 12 by soname, or null when neither is installed.
const Nvrtc* nvrtc() {
  static const Nvrtc* const api = []() -> const Nvrtc* {
    void* lib = nullptr;
    for (const char* soname :
         {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
      if ((lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib == nullptr) return nullptr;
    static Nvrtc t{hipacm::test::rtc_calls(lib, "nvrtc", "CUBIN"), {}};
    t.log_size_counts_nul = true;
    Dl_info info{};
    if (t.create == nullptr || dladdr(reinterpret_cast<void*>(t.create), &info) == 0)
      return nullptr;
    t.file = info.dli_fname;
    return &t;
  }();
  return api;
}

Plain compile_plainly(const char* source, const char* name, std::vector<const char*> options,
                      const std::vector<const char*>& expressions) {
  return hipacm::test::compile_plainly(*nvrtc(), source, name, std::move(options), expressions);
}

Result compile_raw(const char* source, const char* name, const std::vector<const char*>& options,
                   const std::vector<const char*>& expressions, const char* arch,
                   const char* library) {
  hipacm_intercept_request request =
      hipacm::test::intercept_request(source, name, options, expressions, arch);
  request.flags = HIPACM_INTERCEPT_RAW_NVRTC;
  request.library = library;
  return Result(hipacm_intercept_compile_v1(&request));
}

class InterceptEntryNvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nvrtc() == nullptr) GTEST_SKIP() << "no libnvrtc.so.13 or .12";
  }
};

// A CUDA source that HIP's prelude would break: it defines a name the prelude defines as a macro.
constexpr const char* kCuda =
    "#ifdef __HIP_PLATFORM_NVIDIA__\n#error compiled with the HIP prelude\n#endif\n"
    "__device__ int hipThreadIdx_x() { return threadIdx.x; }\n"
    "template <int N> __global__ void fill(int* out) { out[hipThreadIdx_x()] = N; }\n";

TEST_F(InterceptEntryNvrtc, RawCompileEqualsPlainNvrtc) {
  const std::vector<const char*> options = {"-arch=sm_90", "-std=c++17"};
  const std::vector<const char*> expressions = {"fill<1>", "&fill<7>"};
  const Plain plain = compile_plainly(kCuda, "fill.cu", options, expressions);
  ASSERT_EQ(plain.result, 0) << plain.log;
  const Result served =
      compile_raw(kCuda, "fill.cu", options, expressions, "sm_90", nvrtc()->file.c_str());
  ASSERT_NE(served, nullptr);
  ASSERT_EQ(served->outcome, HIPACM_INTERCEPT_COMPILED) << served->reason << ": " << served->detail;
  EXPECT_EQ(served->rtc_result, 0);
  EXPECT_EQ(std::string(served->code, served->code_size), plain.code);
  EXPECT_EQ(std::string(served->log, served->log_size), plain.log);
  ASSERT_EQ(served->num_lowered_names, 2u);
  EXPECT_EQ(served->lowered_names[0], plain.lowered[0]);
  EXPECT_EQ(served->lowered_names[1], plain.lowered[1]);
}

TEST_F(InterceptEntryNvrtc, RawFailureHasPlainResultAndLog) {
  const char* broken = "__global__ void k(int* p) { p[0] = missing; }\n";
  const std::vector<const char*> options = {"--gpu-architecture=sm_90"};
  const Plain plain = compile_plainly(broken, "broken.cu", options, {});
  ASSERT_EQ(plain.result, 6);  // NVRTC_ERROR_COMPILATION
  const Result served =
      compile_raw(broken, "broken.cu", options, {}, "sm_90", nvrtc()->file.c_str());
  ASSERT_NE(served, nullptr);
  ASSERT_EQ(served->outcome, HIPACM_INTERCEPT_FAILED) << served->reason << ": " << served->detail;
  EXPECT_EQ(served->rtc_result, 6);
  EXPECT_EQ(std::string(served->log, served->log_size), plain.log);
}

TEST_F(InterceptEntryNvrtc, RawRequestForAnAmdArchPassesThrough) {
  const Result served = compile_raw(kCuda, "fill.cu", {}, {}, "gfx90a", nvrtc()->file.c_str());
  ASSERT_NE(served, nullptr);
  EXPECT_EQ(served->outcome, HIPACM_INTERCEPT_PASSTHROUGH);
  EXPECT_STREQ(served->reason, "unusual arguments");
}

TEST_F(InterceptEntryNvrtc, AnotherNvrtcFilePassesThrough) {
  const Result served =
      compile_raw(kCuda, "fill.cu", {"-arch=sm_90"}, {}, "sm_90", "/nonexistent/libnvrtc.so.13");
  ASSERT_NE(served, nullptr);
  EXPECT_EQ(served->outcome, HIPACM_INTERCEPT_PASSTHROUGH);
  EXPECT_STREQ(served->reason, "another NVRTC");
}

}  // namespace
