// SPDX-License-Identifier: MIT
// example_kernels_test.cpp - every example kernel compiles for gfx90a, gfx1030 and sm_90, with all
// its kernels.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/dispatch/arch_validation.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Example {
  std::string source_file;
  CompileRequest request;
  std::vector<std::string> functions;  ///< the manifest's extern "C" kernels
};

std::vector<Example> load_examples() {
  const std::string dir = HIPACM_EXAMPLES_DIR;
  const nlohmann::json manifest = nlohmann::json::parse(read_text(dir + "/manifest.json"));
  std::vector<Example> examples;
  for (const auto& entry : manifest.at("kernels")) {
    Example example;
    example.source_file = entry.at("source").get<std::string>();
    example.request.source = read_text(dir + "/" + example.source_file);
    example.request.source_name = example.source_file;
    example.request.options = entry.at("options").get<std::vector<std::string>>();
    for (const auto& [name, path] : entry.at("headers").items()) {
      example.request.headers.emplace_back(name, read_text(dir + "/" + path.get<std::string>()));
    }
    example.request.name_expressions = entry.at("name_expressions").get<std::vector<std::string>>();
    example.functions = entry.at("functions").get<std::vector<std::string>>();
    examples.push_back(std::move(example));
  }
  return examples;
}

class ExampleKernels : public ::testing::TestWithParam<const char*> {};

TEST_P(ExampleKernels, AllSixteenCompileWithEveryKernelPresent) {
  const std::string arch = GetParam();
  if (const Expected<void> valid = validate_arch(arch);
      !valid && valid.failure().status == HIPACM_ERROR_BACKEND_UNAVAILABLE) {
    GTEST_SKIP() << "no compiler for " << arch << " here: " << valid.failure().message;
  }
  const std::vector<Example> examples = load_examples();
  ASSERT_EQ(examples.size(), 16u);
  for (const Example& example : examples) {
    SCOPED_TRACE(example.source_file + " for " + arch);
    CompileRequest request = example.request;
    request.arch = arch;
    const CompileResult result = compile_for_target(request);
    ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
    const Expected<CodeObjectInfo> read = read_code_object(result.code.data(), result.code.size());
    ASSERT_TRUE(read) << read.failure().message;
    const CodeObjectInfo& info = read.value();
    EXPECT_EQ(info.machine, is_nvidia_arch(arch) ? kElfMachineCuda : kElfMachineAmdgpu);
    std::vector<std::string> expected = example.functions;
    expected.insert(expected.end(), result.lowered_names.begin(), result.lowered_names.end());
    EXPECT_EQ(result.lowered_names.size(), request.name_expressions.size());
    const Expected<void> checked = check_code_object(result.code, arch, expected);
    EXPECT_TRUE(checked) << checked.failure().message;
    const std::vector<std::string> present = code_object_kernels(result.code, arch);
    for (const std::string& name : expected) {
      EXPECT_NE(std::find(present.begin(), present.end(), name), present.end()) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, ExampleKernels, ::testing::Values("gfx90a", "gfx1030", "sm_90"),
                         [](const auto& param_info) { return std::string(param_info.param); });

// The check is chosen by arch, and each rejects the other platform's ELF.
TEST(CrossPlatformCheck, RejectsAnElfForTheOtherPlatform) {
  std::string error;
  Expected<void> checked;
  if (const auto loaded = load_nvrtc(); !loaded)
    GTEST_SKIP() << "NVRTC is not available here: " << loaded.failure().message;
  const std::vector<Example> examples = load_examples();
  CompileRequest request = examples.at(0).request;
  request.arch = "sm_90";
  const CompileResult cuda = compile_for_target(request);
  ASSERT_EQ(cuda.status, HIPACM_SUCCESS) << cuda.error_message << "\n" << cuda.log;
  request.arch = "gfx90a";
  const CompileResult amd = compile_for_target(request);
  ASSERT_EQ(amd.status, HIPACM_SUCCESS) << amd.error_message << "\n" << amd.log;
  const std::vector<std::string> kernels = examples.at(0).functions;

  checked = check_code_object(cuda.code, "sm_90", kernels);
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  checked = check_code_object(amd.code, "gfx90a", kernels);
  error = checked.failure().message;
  EXPECT_TRUE(checked) << error;
  checked = check_code_object(amd.code, "sm_90", kernels);
  error = checked.failure().message;
  EXPECT_FALSE(checked);
  EXPECT_NE(error.find("EM_CUDA (190)"), std::string::npos) << error;
  checked = check_code_object(cuda.code, "gfx90a", kernels);
  error = checked.failure().message;
  EXPECT_FALSE(checked);
  EXPECT_NE(error.find("EM_AMDGPU (224)"), std::string::npos) << error;
  checked = check_code_object(cuda.code, "sm_90", {"not_a_kernel"});
  error = checked.failure().message;
  EXPECT_FALSE(checked);
  EXPECT_NE(error.find("not_a_kernel"), std::string::npos) << error;
  checked = check_code_object(cuda.code, "compute_90", kernels);
  error = checked.failure().message;
  EXPECT_FALSE(checked) << "a CUBIN is not PTX";
}

}  // namespace
}  // namespace hipacm::backend
