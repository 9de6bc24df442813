// SPDX-License-Identifier: MIT
// hpp_test_support.h - the kernels, config, ELF check and fixture the C++ wrapper tests share.
#pragma once

#include <hipacm/hipacm.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace hpp_test {

inline constexpr const char* kArch = "gfx90a";

inline std::string vadd_source(const std::string& name) {
  return "extern \"C\" __global__ void " + name +
         "(float* a, const float* b, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) a[i] += b[i];\n"
         "}\n";
}

inline hipacm::Config config() { return hipacm::Config().arch(kArch).max_workers(2); }

// An AMDGPU ELF: magic, ELFCLASS64, little-endian, e_machine EM_AMDGPU (224).
inline ::testing::AssertionResult IsAmdgpuElf(const hipacm_kernel& k) {
  const auto* code = static_cast<const unsigned char*>(k.code);
  if (code == nullptr || k.code_size < 64)
    return ::testing::AssertionFailure() << "code object of " << k.code_size << " bytes";
  if (std::memcmp(code,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return ::testing::AssertionFailure() << "no ELF magic";
  if (code[4] != 2 || code[5] != 1) return ::testing::AssertionFailure() << "not ELF64 LE";
  const unsigned machine =
      static_cast<unsigned>(code[18]) | (static_cast<unsigned>(code[19]) << 8u);
  if (machine != 224) return ::testing::AssertionFailure() << "e_machine " << machine;
  return ::testing::AssertionSuccess();
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The hipacm::Error (sliced, for a CompileError) that `call` throws; a test failure when it
// throws none.
template <class Call>
hipacm::Error thrown_error(Call&& call) {
  try {
    call();
  } catch (const hipacm::Error& e) {
    return e;
  }
  ADD_FAILURE() << "no hipacm::Error was thrown";
  return hipacm::Error(hipacm::Status::Success, "nothing was thrown");
}

// Every test must find the process-wide slot free, and leave it free.
class HppTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(hipacm::active_mode_is_set()); }
  void TearDown() override { EXPECT_FALSE(hipacm::active_mode_is_set()); }
};

}  // namespace hpp_test
