// SPDX-License-Identifier: MIT
// intercept_entry_nvrtc_test.cpp - the private entry's raw NVRTC requests against plain NVRTC in
// the same process: the same CUBIN, lowered names, result codes and failure logs; an AMD arch or
// another NVRTC file passes through.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "plugin/abi/intercept_abi.h"

namespace {

using Program = void*;
struct Nvrtc {
  int (*create)(Program*, const char*, const char*, int, const char**, const char**);
  int (*add_name)(Program, const char*);
  int (*compile)(Program, int, const char**);
  int (*log_size)(Program, std::size_t*);
  int (*log)(Program, char*);
  int (*cubin_size)(Program, std::size_t*);
  int (*cubin)(Program, char*);
  int (*lowered)(Program, const char*, const char**);
  int (*destroy)(Program*);
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
    static Nvrtc t;
    auto get = [&](auto* field, const char* name) {
      *field = reinterpret_cast<std::remove_reference_t<decltype(*field)>>(dlsym(lib, name));
    };
    get(&t.create, "nvrtcCreateProgram");
    get(&t.add_name, "nvrtcAddNameExpression");
    get(&t.compile, "nvrtcCompileProgram");
    get(&t.log_size, "nvrtcGetProgramLogSize");
    get(&t.log, "nvrtcGetProgramLog");
    get(&t.cubin_size, "nvrtcGetCUBINSize");
    get(&t.cubin, "nvrtcGetCUBIN");
    get(&t.lowered, "nvrtcGetLoweredName");
    get(&t.destroy, "nvrtcDestroyProgram");
    Dl_info info{};
    if (t.create == nullptr || dladdr(reinterpret_cast<void*>(t.create), &info) == 0)
      return nullptr;
    t.file = info.dli_fname;
    return &t;
  }();
  return api;
}

struct Plain {
  int result = -1;
  std::string cubin;
  std::string log;  // without NVRTC's terminating NUL, as hipacm keeps it
  std::vector<std::string> lowered;
};

Plain compile_plainly(const char* source, const char* name, std::vector<const char*> options,
                      const std::vector<const char*>& expressions) {
  const Nvrtc& api = *nvrtc();
  Plain plain;
  Program program = nullptr;
  EXPECT_EQ(api.create(&program, source, name, 0, nullptr, nullptr), 0);
  for (const char* expression : expressions) EXPECT_EQ(api.add_name(program, expression), 0);
  plain.result = api.compile(program, static_cast<int>(options.size()), options.data());
  std::size_t size = 0;
  if (api.log_size(program, &size) == 0 && size > 0) {
    plain.log.assign(size, '\0');
    api.log(program, plain.log.data());
    plain.log.resize(plain.log.find('\0'));
  }
  if (plain.result == 0) {
    EXPECT_EQ(api.cubin_size(program, &size), 0);
    plain.cubin.assign(size, '\0');
    EXPECT_EQ(api.cubin(program, plain.cubin.data()), 0);
    for (const char* expression : expressions) {
      const char* lowered = nullptr;
      EXPECT_EQ(api.lowered(program, expression, &lowered), 0);
      plain.lowered.emplace_back(lowered != nullptr ? lowered : "");
    }
  }
  api.destroy(&program);
  return plain;
}

struct Released {
  void operator()(hipacm_intercept_result* r) const { hipacm_intercept_release_v1(r); }
};
using Result = std::unique_ptr<hipacm_intercept_result, Released>;

Result compile_raw(const char* source, const char* name, const std::vector<const char*>& options,
                   const std::vector<const char*>& expressions, const char* arch,
                   const char* library) {
  hipacm_intercept_request request{};
  request.struct_size = sizeof request;
  request.source = source;
  request.source_name = name;
  request.num_options = options.size();
  request.options = options.data();
  request.num_name_expressions = expressions.size();
  request.name_expressions = expressions.data();
  request.arch = arch;
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
  EXPECT_EQ(std::string(served->code, served->code_size), plain.cubin);
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
