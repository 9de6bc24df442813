// SPDX-License-Identifier: MIT
// runtime_compile_program_test.cpp - the program template and error path shared by hipRTC and
// NVRTC, against a scripted library of its own.
#include "hip_backend/rtc/runtime_compile_program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/status_error.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using fake_program = struct fake_program_opaque*;

// What the fake library answers, and what it saw. Reset by the fixture.
struct Script {
  int create = 0;
  int compile = 0;
  int code_size = 0;
  std::size_t reported_code_size = 4;
  std::string log;
  std::vector<std::string> added;
  std::vector<std::string> options;
  int destroyed = 0;
};

Script& script() {
  static Script instance;
  return instance;
}

fake_program the_program() { return reinterpret_cast<fake_program>(&script()); }

int fake_create(fake_program* program, const char*, const char*, int, const char* const*,
                const char* const*) {
  if (script().create != 0) return script().create;
  *program = the_program();
  return 0;
}
int fake_destroy(fake_program* program) {
  if (*program == the_program()) ++script().destroyed;
  *program = nullptr;
  return 0;
}
int fake_add(fake_program, const char* expression) {
  script().added.emplace_back(expression);
  return 0;
}
int fake_compile(fake_program, int count, const char* const* options) {
  script().options.assign(options, options + count);
  return script().compile;
}
int fake_log_size(fake_program, std::size_t* size) {
  *size = script().log.size() + 1;
  return 0;
}
int fake_log(fake_program, char* out) {
  std::memcpy(out, script().log.c_str(), script().log.size() + 1);
  return 0;
}
int fake_lowered(fake_program, const char* expression, const char** name) {
  // Lowered names that tell the test which expression they answer.
  static const std::string kA = "lowered_a", kB = "lowered_b";
  *name = std::string(expression) == "a" ? kA.c_str() : kB.c_str();
  return 0;
}
int fake_code_size(fake_program, std::size_t* size) {
  *size = script().reported_code_size;
  return script().code_size;
}
int fake_code(fake_program, char* out) {
  std::memcpy(out, "CODE", 4);
  return 0;
}

std::string fake_result_name(int result) { return "FAKE_" + std::to_string(result); }

struct FakeTable {
  int (*fakeCreateProgram)(fake_program*, const char*, const char*, int, const char* const*,
                           const char* const*) = fake_create;
  int (*fakeDestroyProgram)(fake_program*) = fake_destroy;
  int (*fakeAddNameExpression)(fake_program, const char*) = fake_add;
  int (*fakeCompileProgram)(fake_program, int, const char* const*) = fake_compile;
  int (*fakeGetProgramLogSize)(fake_program, std::size_t*) = fake_log_size;
  int (*fakeGetProgramLog)(fake_program, char*) = fake_log;
  int (*fakeGetLoweredName)(fake_program, const char*, const char**) = fake_lowered;
  int (*fakeGetCodeSize)(fake_program, std::size_t*) = fake_code_size;
  int (*fakeGetCode)(fake_program, char*) = fake_code;
};

// The fake's calls, with its own hint for a failed compile that left no log.
struct FakeCalls {
  static constexpr const char* kEmptyLogHint = " with an empty log (hint)";
  HIPACM_RUNTIME_COMPILE_CALLS(FakeTable, fake_program, fake, "FakeRTC")
};
using FakeProgram = RuntimeCompileProgram<FakeCalls>;

// The status and message that a throwing call left.
template <class F>
Failure failure_of(F&& call) {
  try {
    call();
  } catch (...) {
    return failure_from_current_exception();
  }
  return {HIPACM_SUCCESS, "no failure"};
}

class RuntimeCompileProgramTest : public ::testing::Test {
 protected:
  void SetUp() override { script() = Script(); }

  // Runs the fake program for `expressions`, filling *out.
  void run(const std::vector<std::string>& expressions, CompiledProgram* out) {
    CompileRequest request;
    request.source = "source";
    request.name_expressions = expressions;
    const NameExpressions names(request.name_expressions);
    const FakeProgram::CodeCalls code{&FakeTable::fakeGetCodeSize, &FakeTable::fakeGetCode,
                                      "GetCodeSize", "GetCode"};
    FakeProgram(table_, request, ProgramHeaders(request)).run({"-O3"}, names, code, out);
  }

  FakeTable table_;
};

TEST_F(RuntimeCompileProgramTest, RunsEachUniqueNameExpressionOnceAndAnswersInRequestOrder) {
  CompiledProgram out;
  script().log = "a warning";
  run({"b", "a", "b"}, &out);
  EXPECT_EQ(script().added, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(script().options, std::vector<std::string>{"-O3"});
  EXPECT_EQ(out.lowered_names, (std::vector<std::string>{"lowered_b", "lowered_a", "lowered_b"}));
  EXPECT_EQ(out.code, (std::vector<std::uint8_t>{'C', 'O', 'D', 'E'}));
  EXPECT_EQ(out.log, "a warning");
  EXPECT_EQ(script().destroyed, 1);
}

TEST_F(RuntimeCompileProgramTest, AFailedCompileKeepsTheLogAndNamesTheCall) {
  CompiledProgram out;
  script().compile = kRtcErrorCompilation;
  Failure failure = failure_of([&] { run({"a"}, &out); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(failure.message, "fakeCompileProgram failed: FAKE_6 with an empty log (hint)");
  EXPECT_EQ(script().destroyed, 1);

  script().log = "error: here";
  failure = failure_of([&] { run({"a"}, &out); });
  EXPECT_EQ(failure.message, "fakeCompileProgram failed: FAKE_6 (see log)");
  EXPECT_EQ(out.log, "error: here");
}

TEST_F(RuntimeCompileProgramTest, ImplausibleCodeSizesAndFailedCallsAreErrors) {
  CompiledProgram out;
  script().reported_code_size = 0;
  Failure failure = failure_of([&] { run({}, &out); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(failure.message, "FakeRTC reported success but produced no code");

  script().reported_code_size = std::numeric_limits<std::size_t>::max();
  failure = failure_of([&] { run({}, &out); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_INTERNAL);
  EXPECT_NE(failure.message.find("fakeGetCodeSize reported "), std::string::npos)
      << failure.message;

  script().reported_code_size = 4;
  script().code_size = kRtcErrorOutOfMemory;
  failure = failure_of([&] { run({}, &out); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(failure.message, "fakeGetCodeSize failed: FAKE_1");
  EXPECT_EQ(script().destroyed, 3);

  script().create = 2;
  failure = failure_of([&] { run({}, &out); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_INTERNAL);
  EXPECT_EQ(failure.message, "fakeCreateProgram failed: FAKE_2");
  EXPECT_EQ(script().destroyed, 3) << "a program never created is never destroyed";
}

TEST(RuntimeCompileStatus, MapsTheSharedResultNumbering) {
  EXPECT_EQ(runtime_compile_status(kRtcErrorOutOfMemory), HIPACM_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(runtime_compile_status(kRtcErrorInvalidInput), HIPACM_ERROR_INVALID_ARGUMENT);
  for (int result : {kRtcErrorCompilation, kRtcErrorInvalidOption, kRtcErrorBuiltinOperationFailure,
                     kRtcErrorNameExpressionNotValid}) {
    EXPECT_EQ(runtime_compile_status(result), HIPACM_ERROR_COMPILATION) << result;
  }
  for (int result : {2, 4, 11, -1}) {
    EXPECT_EQ(runtime_compile_status(result), HIPACM_ERROR_INTERNAL) << result;
  }
}

TEST(RuntimeCompileRequest, ChecksTextAndNameExpressions) {
  CompileRequest request;
  request.source = "int x;";
  EXPECT_EQ(failure_of([&] { check_request_text(request); }).status, HIPACM_SUCCESS);
  request.options = {std::string("-DX\0Y", 5)};
  Failure failure = failure_of([&] { check_request_text(request); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(failure.message, "option contains a NUL byte at offset 3");
  request.options.clear();
  request.headers = {{"", "int y;"}};
  EXPECT_EQ(failure_of([&] { check_request_text(request); }).message, "a header has an empty name");
  request.source.clear();
  EXPECT_EQ(failure_of([&] { check_request_text(request); }).message, "the source is empty");

  failure = failure_of([] { NameExpressions names({"a", ""}); });
  EXPECT_EQ(failure.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(failure.message, "a name expression is empty");
  const NameExpressions names({"x", "y", "x", "x"});
  EXPECT_EQ(names.unique(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(names.in_request_order({"X", "Y"}), (std::vector<std::string>{"X", "Y", "X", "X"}));
}

TEST(RunCheckedCompile, EveryExceptionBecomesTheResultWithTheLogKept) {
  const CompileRequest request = testing::sample_request("gfx90a");
  CompileResult result =
      run_checked_compile("FakeRTC", request, [](CompiledProgram* out, double* seconds) {
        out->log = "partial log";
        *seconds = 2.5;
        throw std::bad_alloc();
      });
  EXPECT_EQ(result.status, HIPACM_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(result.error_message, "out of memory");
  EXPECT_EQ(result.log, "partial log");
  EXPECT_EQ(result.compile_seconds, 2.5);

  result = run_checked_compile("FakeRTC", request, [](CompiledProgram*, double*) {
    throw StatusError(HIPACM_ERROR_BACKEND_UNAVAILABLE, "no library");
  });
  EXPECT_EQ(result.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(result.error_message, "no library");

  result = run_checked_compile(
      "FakeRTC", request, [](CompiledProgram*, double*) { throw std::runtime_error("surprise"); });
  EXPECT_EQ(result.status, HIPACM_ERROR_INTERNAL);
  EXPECT_NE(result.error_message.find("surprise"), std::string::npos) << result.error_message;
}

TEST(RunCheckedCompile, OutputIsAcceptedOnlyThroughTheCodeObjectCheck) {
  const CompileRequest request = testing::sample_request("gfx90a");
  const CompileResult& sample = testing::sample_gfx90a();
  ASSERT_EQ(sample.status, HIPACM_SUCCESS) << sample.error_message;
  CompileResult result =
      run_checked_compile("FakeRTC", request, [&](CompiledProgram* out, double*) {
        out->code = sample.code;
        out->lowered_names = sample.lowered_names;
        out->log = "fine";
      });
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  EXPECT_EQ(result.code, sample.code);
  EXPECT_EQ(result.lowered_names, sample.lowered_names);
  EXPECT_EQ(result.log, "fine");

  result = run_checked_compile("FakeRTC", request, [&](CompiledProgram* out, double*) {
    out->code = sample.code;
    out->lowered_names = {"_Z5ghostv"};
    out->log = "kept";
  });
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(
      result.error_message.rfind(
          "FakeRTC reported success, but hipacm's code-object check rejected its output: ", 0),
      0u)
      << result.error_message;
  EXPECT_TRUE(result.code.empty());
  EXPECT_TRUE(result.lowered_names.empty());
  EXPECT_EQ(result.log, "kept");
}

Expected<const FakeTable*> throwing_loader() { throw std::runtime_error("loader broke"); }

CompileResult never_called(const FakeTable*, const std::string&, const CompileRequest&) {
  ADD_FAILURE() << "compiled without a library";
  return {};
}

TEST(CompileWithLoaded, AThrowingLoaderLeavesTheLibraryUnavailable) {
  const CompileResult result = compile_with_loaded(throwing_loader, "cannot load FakeRTC",
                                                   never_called, testing::sample_request("gfx90a"));
  EXPECT_EQ(result.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(result.error_message, "cannot load FakeRTC: loader broke");
}

}  // namespace
}  // namespace hipacm::backend
