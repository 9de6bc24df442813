// SPDX-License-Identifier: MIT
// trust_worker_result_test.cpp - the host re-checks every code object a worker calls a success.
#include <gtest/gtest.h>

#include <string>

#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

using backend::CompileRequest;
using backend::CompileResult;
using backend::WorkerCompiler;

/// Compiles `request` in a worker whose echo fault replies SUCCESS with the
/// request's source bytes as the code object: a forged reply.
CompileResult forged_reply(const CompileRequest& request) {
  FaultScope echo("echo");
  WorkerCompiler compiler(kWorkerPath, 1, 120000);
  return compiler.compile(request);
}

void expect_rejected_by_hipacm(const CompileResult& r) {
  EXPECT_EQ(r.status, HIPACM_ERROR_COMPILATION) << r.error_message;
  EXPECT_NE(r.error_message.find("the worker's result for kernel.hip failed hipacm's "
                                 "code-object check"),
            std::string::npos)
      << r.error_message;
  EXPECT_EQ(r.error_message.find("hipRTC"), std::string::npos) << r.error_message;
  EXPECT_TRUE(r.code.empty());
}

TEST(Trust08_WorkerResult, ASuccessThatIsNotAnElfIsRejected) {
  expect_rejected_by_hipacm(forged_reply(make_request("these bytes are not a code object")));
}

TEST(Trust08_WorkerResult, AWorkerWhoseAnswerWasRejectedIsRetiredNotReused) {
  FaultScope echo("echo");
  WorkerCompiler compiler(kWorkerPath, 1, 120000);
  expect_rejected_by_hipacm(compiler.compile(make_request("not a code object either")));
  EXPECT_EQ(backend::WorkerPool::instance().idle_count(), 0u);
  EXPECT_TRUE(wait_until([] { return worker_children().empty(); }, 5000))
      << "the worker that sent a rejected result is still running";
  // A valid answer gives the worker back to the pool.
  EXPECT_EQ(compiler.compile(echo_request()).status, HIPACM_SUCCESS);
  EXPECT_EQ(backend::WorkerPool::instance().idle_count(), 1u);
}

TEST(Trust08_WorkerResult, ACodeObjectForAnotherArchIsRejected) {
  CompileRequest request = echo_request();  // a gfx90a object
  request.arch = "gfx1030";
  const CompileResult r = forged_reply(request);
  expect_rejected_by_hipacm(r);
  EXPECT_NE(r.error_message.find("gfx"), std::string::npos) << r.error_message;
}

TEST(Trust08_WorkerResult, ALoweredNameMissingFromTheObjectIsRejected) {
  CompileRequest request = echo_request();  // holds k0 only
  request.name_expressions = {"not_in_this_object"};
  const CompileResult r = forged_reply(request);
  expect_rejected_by_hipacm(r);
  EXPECT_NE(r.error_message.find("not_in_this_object"), std::string::npos) << r.error_message;
}

TEST(Trust08_WorkerResult, AValidObjectFromTheWorkerIsAccepted) {
  const CompileResult r = forged_reply(echo_request());
  EXPECT_EQ(r.status, HIPACM_SUCCESS) << r.error_message;
  EXPECT_EQ(std::string(r.code.begin(), r.code.end()), real_code_object());
}

}  // namespace
}  // namespace hipacm::test
