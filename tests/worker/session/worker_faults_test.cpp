// SPDX-License-Identifier: MIT
// worker_faults_test.cpp - each worker fault fails only its own request; the next gets a fresh
// worker.
#include <gtest/gtest.h>

#include <boost/chrono.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "hip_backend/pool/worker_compiler.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

using backend::CompileResult;
using backend::WorkerCompiler;

// Every fault keyed to a marker in the source, so one worker spec serves all.
constexpr const char* kFaultSpec =
    "crash-segv:when=@SEGV@,abort:when=@ABORT@,hang:when=@HANG@,garbage:when=@GARBAGE@,"
    "exit=7:when=@EXIT7@";
constexpr std::uint32_t kTimeoutMs = 6000;  // room for a cold worker under a sanitizer

struct FaultCase {
  const char* name;
  const char* marker;
  hipacm_status status;
  std::vector<std::string> message_parts;
};

// Names the case in test listings (ctest shows GetParam() otherwise as raw bytes).
void PrintTo(const FaultCase& fault, std::ostream* os) { *os << fault.name; }

class WorkerFaults : public ::testing::TestWithParam<FaultCase> {};

CompileResult compile_ok(WorkerCompiler& compiler, int i) {
  CompileResult r = compiler.compile(make_request(kernel_source(i)));
  EXPECT_EQ(r.status, HIPACM_SUCCESS) << r.error_message;
  return r;
}

TEST_P(WorkerFaults, FailsOnlyItsOwnRequest) {
  const FaultCase& fault = GetParam();
  FaultScope scope(kFaultSpec);
  WorkerCompiler compiler(kWorkerPath, 1, kTimeoutMs);

  compile_ok(compiler, 1);
  const std::vector<pid_t> first = worker_children();
  ASSERT_EQ(first.size(), 1u);

  const auto start = boost::chrono::steady_clock::now();
  const CompileResult bad =
      compiler.compile(make_request(kernel_source(2) + "// " + fault.marker + "\n", "faulty.hip"));
  const double seconds =
      boost::chrono::duration<double>(boost::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(bad.status, fault.status) << bad.error_message;
  EXPECT_TRUE(bad.code.empty());
  for (const std::string& part : fault.message_parts) {
    EXPECT_NE(bad.error_message.find(part), std::string::npos)
        << "missing '" << part << "' in: " << bad.error_message;
  }
  EXPECT_NE(bad.error_message.find("pid " + std::to_string(first[0])), std::string::npos)
      << bad.error_message;
  EXPECT_NE(bad.error_message.find("faulty.hip"), std::string::npos) << bad.error_message;
  // The stderr tail: the worker announces each injected fault there.
  EXPECT_NE(bad.error_message.find(std::string("injecting fault '") + fault.name + "'"),
            std::string::npos)
      << bad.error_message;
  if (fault.status == HIPACM_ERROR_TIMEOUT) {
    EXPECT_GE(seconds, kTimeoutMs / 1000.0 - 0.05);
  } else {
    EXPECT_LT(seconds, kTimeoutMs / 1000.0) << "a crash must be noticed at once, not by timeout";
  }
  // The failed worker is gone (reaped, not a zombie); the next request succeeds on a new one.
  EXPECT_TRUE(worker_children().empty());
  compile_ok(compiler, 3);
  const std::vector<pid_t> second = worker_children();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0], first[0]);
  EXPECT_EQ(zombie_children(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllFaults, WorkerFaults,
    ::testing::Values(
        FaultCase{"crash-segv",
                  "@SEGV@",
                  HIPACM_ERROR_COMPILER_CRASHED,
                  {"killed by signal 11 (Segmentation fault)"}},
        FaultCase{
            "abort", "@ABORT@", HIPACM_ERROR_COMPILER_CRASHED, {"killed by signal 6 (Aborted)"}},
        FaultCase{
            "hang", "@HANG@", HIPACM_ERROR_TIMEOUT, {"timed out after 6000 ms", "was killed"}},
        FaultCase{"garbage",
                  "@GARBAGE@",
                  HIPACM_ERROR_COMPILER_CRASHED,
                  {"invalid response", "bad frame magic", "it was killed"}},
        FaultCase{"exit", "@EXIT7@", HIPACM_ERROR_COMPILER_CRASHED, {"exited with code 7"}}),
    [](const ::testing::TestParamInfo<FaultCase>& param) {
      std::string name = param.param.name;
      for (char& c : name) c = c == '-' ? '_' : c;
      return name;
    });

TEST(WorkerFaultsStartup, SlowStartWithinTheTimeoutSucceeds) {
  FaultScope scope("slow-start=800");
  WorkerCompiler compiler(kWorkerPath, 1, 20000);
  const auto start = boost::chrono::steady_clock::now();
  compile_ok(compiler, 1);
  EXPECT_GE(boost::chrono::steady_clock::now() - start, boost::chrono::milliseconds(800));
}

TEST(WorkerFaultsStartup, SlowStartPastTheTimeoutTimesOutThenRecovers) {
  WorkerCompiler compiler(kWorkerPath, 1, 1500);
  {
    FaultScope scope("slow-start=60000");
    const CompileResult r = compiler.compile(make_request(kernel_source(1)));
    EXPECT_EQ(r.status, HIPACM_ERROR_TIMEOUT) << r.error_message;
    EXPECT_NE(r.error_message.find("timed out after 1500 ms"), std::string::npos)
        << r.error_message;
    EXPECT_TRUE(worker_children().empty());
  }
  // Without the fault, the next request gets a fresh, normal worker.
  WorkerCompiler patient(kWorkerPath, 1, 20000);
  compile_ok(patient, 2);
}

TEST(WorkerFaultsStartup, FaultsNeedTheEnableSwitch) {
  backend::WorkerPool::instance().shutdown();
  ScopedEnv spec("HIPACM_WORKER_FAULT", "crash-segv");
  ScopedEnv enable("HIPACM_TEST_HOOKS", std::nullopt);
  WorkerCompiler compiler(kWorkerPath, 1, 20000);
  compile_ok(compiler, 1);
  backend::WorkerPool::instance().shutdown();
}

TEST(WorkerFaultsStartup, BadFaultSpecIsReportedAsAnExitCode) {
  FaultScope scope("no-such-fault");
  WorkerCompiler compiler(kWorkerPath, 1, 20000);
  const CompileResult r = compiler.compile(make_request(kernel_source(1)));
  EXPECT_EQ(r.status, HIPACM_ERROR_COMPILER_CRASHED);
  EXPECT_NE(r.error_message.find("exited with code 64"), std::string::npos) << r.error_message;
  EXPECT_NE(r.error_message.find("unknown fault 'no-such-fault'"), std::string::npos)
      << r.error_message;
}

}  // namespace
}  // namespace hipacm::test
