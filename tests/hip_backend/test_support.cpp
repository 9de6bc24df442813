// SPDX-License-Identifier: MIT
// test_support.cpp - shared fixtures for the backend tests.
#include "tests/hip_backend/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"

namespace hipacm::backend::testing {

const char* const kSampleSource = R"(
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

template <typename T>
__global__ void scale(T* x, T s) { x[threadIdx.x] *= s; }
)";

CompileRequest source_request(std::string source, std::string source_name,
                              const std::string& arch) {
  CompileRequest request;
  request.source = std::move(source);
  request.source_name = std::move(source_name);
  request.arch = arch;
  return request;
}

CompileRequest sample_request(const std::string& arch) {
  CompileRequest request = source_request(kSampleSource, "sample.hip", arch);
  request.name_expressions = {"scale<float>"};
  return request;
}

const CompileResult& sample_gfx90a() {
  static const CompileResult result = compile_with_hiprtc(sample_request("gfx90a"));
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  return result;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

void read_supported_processors(std::vector<std::string>* out) {
  const auto supported = supported_amdgpu_processors();
  ASSERT_TRUE(supported) << supported.failure().message;
  *out = *supported.value();
  ASSERT_FALSE(out->empty());
}

std::string expect_verdict(const Expected<void>& checked, bool passes) {
  const std::string error = checked.failure().message;
  EXPECT_EQ(checked.has_value(), passes) << error;
  return error;
}

std::string expect_arch_check(const std::string& arch, bool accepted) {
  SCOPED_TRACE("arch '" + arch + "'");
  return expect_verdict(validate_amdgpu_arch(arch), accepted);
}

}  // namespace hipacm::backend::testing
