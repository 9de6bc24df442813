// SPDX-License-Identifier: MIT
// intercept_entry_test.cpp - the private entry of libhipacm_intercept.so against plain hipRTC:
// the same code bytes, lowered names, result codes and (comgr's random digits aside) failure logs.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "plugin/abi/intercept_abi.h"
#include "tests/plugin/abi/intercept_entry_support.h"
#include "tests/scoped_env.h"

namespace {

using hipacm::test::Plain;
using hipacm::test::Result;
using hipacm::test::RtcCalls;

// hipRTC 5.x from libamdhip64.so.5, or null when it is not installed.
const RtcCalls* hiprtc() {
  static const RtcCalls* const api = []() -> const RtcCalls* {
    void* lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    static RtcCalls t = hipacm::test::rtc_calls(lib, "hiprtc", "Code");
    return t.create != nullptr && t.destroy != nullptr ? &t : nullptr;
  }();
  return api;
}

Plain compile_plainly(const char* source, const char* name, std::vector<const char*> options,
                      const std::vector<const char*>& expressions) {
  return hipacm::test::compile_plainly(*hiprtc(), source, name, std::move(options), expressions);
}

Result compile_through_hipacm(const char* source, const char* name,
                              const std::vector<const char*>& options,
                              const std::vector<const char*>& expressions) {
  hipacm_intercept_request request =
      hipacm::test::intercept_request(source, name, options, expressions, "gfx90a");
  return Result(hipacm_intercept_compile_v1(&request));
}

// The six random hex digits of comgr's directory, new in every compile, which plain hipRTC's
// diagnostics name and hipacm's served log names too: the one part of two logs that differs.
std::string without_comgr_random(const std::string& log) {
  static const std::regex random("/comgr-[0-9a-f]{6}/");
  return std::regex_replace(log, random, "/comgr-XXXXXX/");
}

class InterceptEntry : public ::testing::Test {
 protected:
  void SetUp() override {
    if (hiprtc() == nullptr) GTEST_SKIP() << "no libamdhip64.so.5";
  }
};

constexpr const char* kTemplated =
    "template <int N> __global__ void fill(int* out) { out[threadIdx.x] = N; }\n"
    "extern \"C\" __global__ void plain_kernel(float* x) { x[0] *= 2.0f; }\n";

TEST_F(InterceptEntry, CompiledCodeAndLoweredNamesEqualPlainHiprtc) {
  const std::vector<const char*> options = {"--offload-arch=gfx90a", "-O3"};
  const std::vector<const char*> expressions = {"fill<1>", "fill<7>"};
  const Plain plain = compile_plainly(kTemplated, "templated.hip", options, expressions);
  ASSERT_EQ(plain.result, 0) << plain.log;
  const Result served = compile_through_hipacm(kTemplated, "templated.hip", options, expressions);
  ASSERT_NE(served, nullptr);
  ASSERT_TRUE(served->outcome == HIPACM_INTERCEPT_COMPILED ||
              served->outcome == HIPACM_INTERCEPT_HIT)
      << served->reason << ": " << served->detail;
  EXPECT_EQ(served->rtc_result, 0);
  EXPECT_EQ(std::string(served->code, served->code_size), plain.code);
  EXPECT_EQ(std::string(served->log, served->log_size), plain.log);
  ASSERT_EQ(served->num_lowered_names, expressions.size());
  for (std::size_t i = 0; i < expressions.size(); ++i)
    EXPECT_EQ(served->lowered_names[i], plain.lowered[i]) << expressions[i];
}

TEST_F(InterceptEntry, FailedCompileHasPlainResultAndLog) {
  const char* source = "__global__ void broken(int* x) { x[0] = undeclared_thing; }\n";
  const std::vector<const char*> options = {"--offload-arch=gfx90a"};
  const Plain plain = compile_plainly(source, "broken.hip", options, {});
  ASSERT_NE(plain.result, 0);
  const Result served = compile_through_hipacm(source, "broken.hip", options, {});
  ASSERT_NE(served, nullptr);
  ASSERT_EQ(served->outcome, HIPACM_INTERCEPT_FAILED) << served->reason << ": " << served->detail;
  EXPECT_EQ(served->rtc_result, plain.result);
  EXPECT_NE(plain.log.find("/input/CompileSource:1:"), std::string::npos) << plain.log;
  EXPECT_EQ(without_comgr_random(std::string(served->log, served->log_size)),
            without_comgr_random(plain.log));
}

TEST_F(InterceptEntry, RequestHipacmCannotKeyPassesThrough) {
  // A computed include: the cache cannot know which file the compiler reads.
  const char* source = "#define HEADER <cstdint>\n#include HEADER\n__global__ void k() {}\n";
  const Result served =
      compile_through_hipacm(source, "computed.hip", {"--offload-arch=gfx90a"}, {});
  ASSERT_NE(served, nullptr);
  EXPECT_EQ(served->outcome, HIPACM_INTERCEPT_PASSTHROUGH);
  EXPECT_STREQ(served->reason, "not keyable");
  EXPECT_NE(std::string(served->detail), "");
}

// The entry makes its compile step once per arch and process, from the environment it finds then:
// each test sets what it needs before its first compile, and ctest runs each in a process of its
// own.
TEST_F(InterceptEntry, SecondCompileIsACacheHitWithTheSameAnswer) {
  char dir[] = "/tmp/hipacm-intercept-entry-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const hipacm::test::ScopedEnv cache("HIPACM_CACHE", "readwrite");
  const hipacm::test::ScopedEnv cache_dir("HIPACM_CACHE_DIR", std::string(dir));
  const std::vector<const char*> options = {"--offload-arch=gfx90a"};
  const std::vector<const char*> expressions = {"fill<3>"};
  const Result first = compile_through_hipacm(kTemplated, "templated.hip", options, expressions);
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->outcome, HIPACM_INTERCEPT_COMPILED) << first->reason << ": " << first->detail;
  const Result second = compile_through_hipacm(kTemplated, "templated.hip", options, expressions);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->outcome, HIPACM_INTERCEPT_HIT) << second->reason << ": " << second->detail;
  EXPECT_EQ(std::string(second->code, second->code_size),
            std::string(first->code, first->code_size));
  ASSERT_EQ(second->num_lowered_names, 1u);
  EXPECT_STREQ(second->lowered_names[0], first->lowered_names[0]);
  EXPECT_EQ(std::system(("rm -rf " + std::string(dir)).c_str()), 0);
}

TEST_F(InterceptEntry, CrashedCompilerIsACompileErrorThatSaysSo) {
  const hipacm::test::ScopedEnv hooks("HIPACM_TEST_HOOKS", "1");
  const hipacm::test::ScopedEnv fault("HIPACM_WORKER_FAULT", "crash-segv:when=crash_here");
  const char* source = "extern \"C\" __global__ void crash_here(int* x) { x[0] = 1; }\n";
  const Result served = compile_through_hipacm(source, "crash.hip", {"--offload-arch=gfx90a"}, {});
  ASSERT_NE(served, nullptr);
  ASSERT_EQ(served->outcome, HIPACM_INTERCEPT_FAILED) << served->reason << ": " << served->detail;
  EXPECT_EQ(served->rtc_result, 6);  // HIPRTC_ERROR_COMPILATION
  EXPECT_NE(std::string(served->log, served->log_size).find("the compiler crashed"),
            std::string::npos)
      << served->log;
}

TEST_F(InterceptEntry, MissingArchPassesThrough) {
  hipacm_intercept_request request{};
  request.struct_size = sizeof request;
  request.source = kTemplated;
  request.source_name = "templated.hip";
  const Result served(hipacm_intercept_compile_v1(&request));
  ASSERT_NE(served, nullptr);
  EXPECT_EQ(served->outcome, HIPACM_INTERCEPT_PASSTHROUGH);
  EXPECT_STREQ(served->reason, "unusual arguments");
}

}  // namespace
