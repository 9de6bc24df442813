// SPDX-License-Identifier: MIT
// code_object_check_test.cpp - the success criterion on real and damaged code objects.
#include "hip_backend/codeobject/code_object_check.h"

#include "hip_backend/codeobject/compile_result_check.h"
#include "hip_backend/dispatch/compile_dispatch.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::expect_verdict;

const std::vector<std::uint8_t>& code() { return testing::sample_gfx90a().code; }
std::string lowered() {
  const auto& names = testing::sample_gfx90a().lowered_names;
  return names.empty() ? std::string("?") : names[0];
}

TEST(CodeObjectCheck, AcceptsTheRealCodeObject) {
  expect_verdict(check_amdgpu_code_object(code(), "gfx90a", {"vadd", lowered()}), true);
  expect_verdict(check_amdgpu_code_object(code(), "gfx90a", {}), true);
  // Only the processor part of the arch has to match.
  expect_verdict(check_amdgpu_code_object(code(), "gfx90a:sramecc+:xnack-", {"vadd"}), true);
}

TEST(CodeObjectCheck, RejectsAnotherProcessor) {
  const std::string error =
      expect_verdict(check_amdgpu_code_object(code(), "gfx1030", {"vadd"}), false);
  EXPECT_NE(error.find("'gfx90a'"), std::string::npos) << error;
  EXPECT_NE(error.find("'gfx1030'"), std::string::npos) << error;
}

TEST(CodeObjectCheck, NamesMissingKernels) {
  const std::string error = expect_verdict(
      check_amdgpu_code_object(code(), "gfx90a", {"vadd", "ghost", "ghost", "other"}), false);
  EXPECT_NE(error.find("ghost.kd, other.kd"), std::string::npos) << error;
  EXPECT_EQ(error.find("ghost.kd, ghost.kd"), std::string::npos) << error;
  EXPECT_NE(error.find("kernels present: "), std::string::npos) << error;
  EXPECT_NE(error.find("vadd"), std::string::npos) << error;
}

TEST(CodeObjectCheck, RejectsGarbageAndEmptyInput) {
  std::string error;
  error = expect_verdict(check_amdgpu_code_object({}, "gfx90a", {}), false);
  EXPECT_NE(error.find("unreadable"), std::string::npos) << error;
  error = expect_verdict(check_amdgpu_code_object({1, 2, 3, 4, 5}, "gfx90a", {}), false);
  EXPECT_NE(error.find("unreadable"), std::string::npos) << error;
}

TEST(CodeObjectCheck, RejectsAHostElf) {
  std::ifstream self("/proc/self/exe", std::ios::binary);
  const std::vector<std::uint8_t> host((std::istreambuf_iterator<char>(self)),
                                       std::istreambuf_iterator<char>());
  ASSERT_GT(host.size(), 64u);
  const std::string error = expect_verdict(check_amdgpu_code_object(host, "gfx90a", {}), false);
  EXPECT_NE(error.find("e_machine"), std::string::npos) << error;
}

TEST(CodeObjectCheck, RejectsAnUnknownProcessorInFlags) {
  std::vector<std::uint8_t> patched = code();
  patched[48] = 0x27;  // a reserved EF_AMDGPU_MACH value
  const std::string error = expect_verdict(check_amdgpu_code_object(patched, "gfx90a", {}), false);
  EXPECT_NE(error.find("unknown"), std::string::npos) << error;
}

// The one acceptance test derives what it needs from the request.
TEST(Trust09_CompileResultCheck, RequiresExactlyTheRequestsLoweredNamesAndNothingFromTheSource) {
  CompileRequest request = testing::sample_request("gfx90a");
  std::string error;
  expect_verdict(check_compile_result(request, code(), {lowered()}), true);
  // A kernel the source scan would find but that the program compiled out is
  // no reason to reject: only the request's lowered names are required.
  request.source += "\n#if 0\nextern \"C\" __global__ void gone(int*) {}\n#endif\n";
  expect_verdict(check_compile_result(request, code(), {lowered()}), true);

  error = expect_verdict(check_compile_result(request, code(), {}), false);
  EXPECT_NE(error.find("0 lowered name(s) for 1 name expression(s)"), std::string::npos) << error;
  expect_verdict(check_compile_result(request, code(), {lowered(), lowered()}), false);
  error = expect_verdict(check_compile_result(request, code(), {"_Z5ghostPf"}), false);
  EXPECT_NE(error.find("_Z5ghostPf"), std::string::npos) << error;
  expect_verdict(check_compile_result(request, code(), {""}), false);
  expect_verdict(check_compile_result(request, code(), {std::string(70000, 'a')}), false);
  request.arch = "gfx1030";
  expect_verdict(check_compile_result(request, code(), {lowered()}), false);
  request.arch = "gfx90a";
  expect_verdict(check_compile_result(request, {0x7f, 'E', 'L', 'F'}, {lowered()}), false);
}

TEST(Trust09_CompileResultCheck, AcceptsADataSymbolForAVariableNameExpression) {
  CompileRequest request;
  request.arch = "gfx90a";
  request.source =
      "__device__ float table[4];\n"
      "extern \"C\" __global__ void use(float* x) { x[0] = table[threadIdx.x & 3]; }\n";
  request.name_expressions = {"&table"};
  const CompileResult result = compile_for_target(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << result.log;
  expect_verdict(check_compile_result(request, result.code, result.lowered_names), true);
}

}  // namespace
}  // namespace hipacm::backend
