// SPDX-License-Identifier: MIT
// test_support.cpp - shared fixtures for the backend tests.
#include "tests/hip_backend/test_support.h"

#include <gtest/gtest.h>

#include <cstdlib>

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

CompileRequest sample_request(const std::string& arch) {
  CompileRequest request;
  request.source = kSampleSource;
  request.source_name = "sample.hip";
  request.name_expressions = {"scale<float>"};
  request.arch = arch;
  return request;
}

const CompileResult& sample_gfx90a() {
  static const CompileResult result = compile_with_hiprtc(sample_request("gfx90a"));
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  return result;
}

}  // namespace hipacm::backend::testing
