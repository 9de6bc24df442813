// SPDX-License-Identifier: MIT
// fake_hiprtc_test.cpp - the compile path against a scripted fake hipRTC: locking, cleanup, result
// mapping.
#include <gtest/gtest.h>

#include <boost/thread/thread.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "hip_backend/hiprtc/inprocess_internal.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

// What the fake returns, and what it saw. Set up before any compile starts.
struct Script {
  hiprtc_result create = 0;
  hiprtc_result add_name = 0;
  hiprtc_result compile = 0;
  hiprtc_result code_size = 0;
  hiprtc_result lowered = 0;
  bool lowered_is_null = false;
  const char* lowered_text = "_Z5scaleIfEvPT_S0_";
  std::size_t reported_code_size = 0;  // 0 = the real sample's size
  std::string log;
  bool log_size_excludes_nul = false;
  std::chrono::milliseconds compile_time{0};

  std::atomic<int> created{0};
  std::atomic<int> destroyed{0};
  std::atomic<int> inside{0};
  std::atomic<int> most_inside{0};
  std::vector<std::string> options;  // of the last compile
};

Script& script() {
  static Script instance;
  return instance;
}

hiprtc_program fake_program() { return reinterpret_cast<hiprtc_program>(&script()); }

const char* error_string(hiprtc_result) { return "fake"; }
hiprtc_result version(int* major, int* minor) {
  *major = 9;
  *minor = 0;
  return 0;
}
hiprtc_result create(hiprtc_program* program, const char*, const char*, int, const char**,
                     const char**) {
  if (script().create != 0) return script().create;
  ++script().created;
  *program = fake_program();
  return 0;
}
hiprtc_result destroy(hiprtc_program* program) {
  if (*program == fake_program()) ++script().destroyed;
  *program = nullptr;
  return 0;
}
hiprtc_result add_name(hiprtc_program, const char*) { return script().add_name; }
hiprtc_result compile(hiprtc_program, int count, const char** options) {
  const int now = ++script().inside;
  int most = script().most_inside.load();
  while (now > most && !script().most_inside.compare_exchange_weak(most, now)) {
  }
  script().options.assign(options, options + count);
  boost::this_thread::sleep_for(boost::chrono::milliseconds(script().compile_time.count()));
  --script().inside;
  return script().compile;
}
hiprtc_result lowered_name(hiprtc_program, const char*, const char** name) {
  *name = script().lowered_is_null ? nullptr : script().lowered_text;
  return script().lowered;
}
hiprtc_result log_size(hiprtc_program, std::size_t* size) {
  *size = script().log.size() + (script().log_size_excludes_nul ? 0 : 1);
  return 0;
}
hiprtc_result get_log(hiprtc_program, char* out) {
  std::memcpy(out, script().log.c_str(), script().log.size() + 1);  // always with its NUL
  return 0;
}
hiprtc_result code_size(hiprtc_program, std::size_t* size) {
  const std::size_t real = testing::sample_gfx90a().code.size();
  *size = script().reported_code_size != 0 ? script().reported_code_size : real;
  return script().code_size;
}
hiprtc_result get_code(hiprtc_program, char* out) {
  const auto& code = testing::sample_gfx90a().code;
  std::memcpy(out, code.data(), code.size());
  return 0;
}

HiprtcApi fake_api() {
  HiprtcApi api;
  api.hiprtcGetErrorString = error_string;
  api.hiprtcVersion = version;
  api.hiprtcCreateProgram = create;
  api.hiprtcDestroyProgram = destroy;
  api.hiprtcAddNameExpression = add_name;
  api.hiprtcCompileProgram = compile;
  api.hiprtcGetLoweredName = lowered_name;
  api.hiprtcGetProgramLogSize = log_size;
  api.hiprtcGetProgramLog = get_log;
  api.hiprtcGetCodeSize = code_size;
  api.hiprtcGetCode = get_code;
  api.library_path = "fake";
  api.version = "9.0";
  return api;
}

class FakeHiprtc : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testing::sample_gfx90a().status, HIPACM_SUCCESS);  // compiled before faking
    Script& s = script();
    s.create = s.add_name = s.compile = s.code_size = s.lowered = 0;
    s.lowered_is_null = false;
    s.reported_code_size = 0;
    s.log.clear();
    s.log_size_excludes_nul = false;
    s.compile_time = std::chrono::milliseconds(0);
    s.created = s.destroyed = s.inside = s.most_inside = 0;
    s.options.clear();
  }
  CompileResult run(const CompileRequest& request = testing::sample_request("gfx90a")) {
    const HiprtcApi api = fake_api();
    return compile_with_hiprtc_api(&api, "", request);
  }
};

TEST_F(FakeHiprtc, SucceedsWithTheScriptedCode) {
  const CompileResult result = run();
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  EXPECT_EQ(result.code, testing::sample_gfx90a().code);
  EXPECT_EQ(result.lowered_names, std::vector<std::string>{"_Z5scaleIfEvPT_S0_"});
  EXPECT_EQ(script().created.load(), 1);
  EXPECT_EQ(script().destroyed.load(), 1);
}

TEST_F(FakeHiprtc, OverlappingCallersAreSerialized) {
  script().compile_time = std::chrono::milliseconds(20);
  std::atomic<int> successes{0};
  boost::thread_group threads;
  for (int t = 0; t < 4; ++t) {
    threads.create_thread([&] {
      for (int i = 0; i < 3; ++i) {
        if (run().status == HIPACM_SUCCESS) ++successes;
      }
    });
  }
  threads.join_all();
  EXPECT_EQ(successes.load(), 12);
  EXPECT_EQ(script().most_inside.load(), 1);
}

TEST_F(FakeHiprtc, PrependsTheArchOnlyWhenTheOptionsLackOne) {
  CompileRequest request = testing::sample_request("gfx90a:xnack-");
  request.options = {"-O3"};
  ASSERT_EQ(run(request).status, HIPACM_SUCCESS);
  EXPECT_EQ(script().options,
            (std::vector<std::string>{"--gpu-architecture=gfx90a:xnack-", "-O3"}));
  request.options = {"-O3", "--offload-arch=gfx90a:xnack-"};
  ASSERT_EQ(run(request).status, HIPACM_SUCCESS);
  EXPECT_EQ(script().options, (std::vector<std::string>{"-O3", "--offload-arch=gfx90a:xnack-"}));
}

TEST_F(FakeHiprtc, MapsResultsAndAlwaysDestroysTheProgram) {
  struct Case {
    hiprtc_result Script::*field;
    hiprtc_result value;
    hipacm_status status;
    const char* message;
  };
  const Case cases[] = {
      {&Script::compile, 1, HIPACM_ERROR_OUT_OF_MEMORY, "HIPRTC_ERROR_OUT_OF_MEMORY"},
      {&Script::compile, 6, HIPACM_ERROR_COMPILATION, "HIPRTC_ERROR_COMPILATION"},
      {&Script::compile, 5, HIPACM_ERROR_COMPILATION, "HIPRTC_ERROR_INVALID_OPTION"},
      {&Script::compile, 11, HIPACM_ERROR_INTERNAL, "HIPRTC_ERROR_INTERNAL_ERROR"},
      {&Script::add_name, 3, HIPACM_ERROR_INVALID_ARGUMENT,
       "hiprtcAddNameExpression(\"scale<float>\") failed: HIPRTC_ERROR_INVALID_INPUT"},
      {&Script::add_name, 4, HIPACM_ERROR_INTERNAL, "HIPRTC_ERROR_INVALID_PROGRAM"},
      {&Script::add_name, 1, HIPACM_ERROR_OUT_OF_MEMORY, "hiprtcAddNameExpression"},
      {&Script::code_size, 4, HIPACM_ERROR_INTERNAL, "hiprtcGetCodeSize failed"},
      {&Script::lowered, 10, HIPACM_ERROR_COMPILATION, "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID"},
  };
  for (const Case& c : cases) {
    SetUp();
    script().*c.field = c.value;
    const CompileResult result = run();
    EXPECT_EQ(result.status, c.status) << c.message;
    EXPECT_NE(result.error_message.find(c.message), std::string::npos) << result.error_message;
    EXPECT_TRUE(result.code.empty());
    EXPECT_EQ(script().created.load(), 1) << c.message;
    EXPECT_EQ(script().destroyed.load(), 1) << c.message;
  }
}

TEST_F(FakeHiprtc, FailedCreateIsReportedWithoutADestroy) {
  script().create = 2;
  const CompileResult result = run();
  EXPECT_EQ(result.status, HIPACM_ERROR_INTERNAL);
  EXPECT_NE(result.error_message.find("hiprtcCreateProgram failed: "
                                      "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE"),
            std::string::npos)
      << result.error_message;
  EXPECT_EQ(script().destroyed.load(), 0);
}

TEST_F(FakeHiprtc, ExplainsACompileFailureWithoutALog) {
  script().compile = 6;
  CompileResult result = run();
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_NE(result.error_message.find("empty log"), std::string::npos) << result.error_message;
  script().log = "error: something\n";
  result = run();
  EXPECT_EQ(result.error_message,
            "hiprtcCompileProgram failed: HIPRTC_ERROR_COMPILATION (see log)");
  EXPECT_EQ(result.log, "error: something\n");
}

TEST_F(FakeHiprtc, LogSizeWithoutTheNulDoesNotOverflow) {
  script().log = "warning: a log whose size excludes the terminating NUL";
  script().log_size_excludes_nul = true;
  const CompileResult result = run();
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  EXPECT_EQ(result.log, script().log);
}

TEST_F(FakeHiprtc, ImplausibleSizesAndNullNamesAreErrors) {
  script().reported_code_size = std::numeric_limits<std::size_t>::max();
  CompileResult result = run();
  EXPECT_EQ(result.status, HIPACM_ERROR_INTERNAL);
  EXPECT_NE(result.error_message.find("hiprtcGetCodeSize reported"), std::string::npos);
  EXPECT_EQ(script().destroyed.load(), 1);
  SetUp();
  script().lowered_is_null = true;
  result = run();
  EXPECT_EQ(result.status, HIPACM_ERROR_INTERNAL);
  EXPECT_NE(result.error_message.find("gave no name"), std::string::npos);
}

TEST_F(FakeHiprtc, Trust09_HipacmsOwnCheckRejectsAndSaysSo) {
  // A kernel the source names but the object lacks is no reason to reject:
  // the compiler decides what a program holds.
  CompileRequest request = testing::sample_request("gfx90a");
  request.source += "extern \"C\" __global__ void missing_kernel() {}\n";
  EXPECT_EQ(run(request).status, HIPACM_SUCCESS);
  // A lowered name the object lacks is: the request needs it.
  script().lowered_text = "_Z5ghostv";
  CompileResult result = run(testing::sample_request("gfx90a"));
  script().lowered_text = "_Z5scaleIfEvPT_S0_";
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_NE(result.error_message.find("_Z5ghostv"), std::string::npos) << result.error_message;
  EXPECT_NE(result.error_message.find("hipacm's code-object check rejected"), std::string::npos)
      << result.error_message;
  EXPECT_EQ(result.error_message.find("hiprtcCompileProgram failed"), std::string::npos)
      << result.error_message;
  // The fake always returns a gfx90a object.
  result = run(testing::sample_request("gfx1030"));
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_NE(result.error_message.find("expected 'gfx1030'"), std::string::npos)
      << result.error_message;
}

TEST_F(FakeHiprtc, MissingLibraryIsBackendUnavailable) {
  const CompileResult result = compile_with_hiprtc_api(nullptr, "cannot open hipRTC (tried ...)",
                                                       testing::sample_request("gfx90a"));
  EXPECT_EQ(result.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(result.error_message, "cannot open hipRTC (tried ...)");
  EXPECT_EQ(script().created.load(), 0);
}

}  // namespace
}  // namespace hipacm::backend
