// SPDX-License-Identifier: MIT
// inprocess_compiler_test.cpp - real hipRTC compiles (no GPU needed): success, failures, arch
// guards, threads.
#include "hip_backend/hiprtc/inprocess_compiler.h"

#include <gtest/gtest.h>

#include <boost/thread/thread.hpp>

#include <algorithm>
#include <atomic>
#include <memory>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "tests/hip_backend/rocm_facts.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::sample_request;

CodeObjectInfo parse(const CompileResult& result) {
  Expected<CodeObjectInfo> info = read_code_object(result.code.data(), result.code.size());
  EXPECT_TRUE(info) << info.failure().message;
  return info ? std::move(info).value() : CodeObjectInfo{};
}

bool has_kernel(const CodeObjectInfo& info, const std::string& name) {
  return std::find(info.amdgpu_kernels.begin(), info.amdgpu_kernels.end(), name) !=
         info.amdgpu_kernels.end();
}

// EF_AMDGPU_FEATURE_XNACK_V4 bits of e_flags: 0x100 any, 0x200 off, 0x300 on.
std::uint32_t xnack_bits(const CodeObjectInfo& info) { return info.flags & 0x300; }

TEST(InProcessCompiler, CompilesVectorAddAndATemplateForGfx90a) {
  const CompileResult& result = testing::sample_gfx90a();
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  EXPECT_EQ(result.error_message, "");
  ASSERT_EQ(result.lowered_names.size(), 1u);
  EXPECT_EQ(result.lowered_names[0], "_Z5scaleIfEvPT_S0_");
  EXPECT_GT(result.compile_seconds, 0.0);
  const CodeObjectInfo info = parse(result);
  EXPECT_EQ(info.machine, kElfMachineAmdgpu);
  EXPECT_EQ(info.type, 3);
  EXPECT_EQ(amdgpu_processor_from_flags(info.flags), "gfx90a");
  EXPECT_TRUE(has_kernel(info, "vadd"));
  EXPECT_TRUE(has_kernel(info, "_Z5scaleIfEvPT_S0_"));
}

TEST(InProcessCompiler, CompilesForGfx1030ThroughTheInterface) {
  std::unique_ptr<Compiler> compiler = std::make_unique<InProcessCompiler>();
  const CompileResult result = compiler->compile(sample_request("gfx1030"));
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  const CodeObjectInfo info = parse(result);
  EXPECT_EQ(amdgpu_processor_from_flags(info.flags), "gfx1030");
  EXPECT_TRUE(has_kernel(info, "vadd"));
}

TEST(InProcessCompiler, PassesTargetFeatures) {
  const CompileResult result = compile_with_hiprtc(sample_request("gfx90a:xnack-"));
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  const CodeObjectInfo info = parse(result);
  EXPECT_EQ(amdgpu_processor_from_flags(info.flags), "gfx90a");
  EXPECT_EQ(xnack_bits(info), 0x200u);
}

TEST(InProcessCompiler, KeepsTheCallersArchOption) {
  CompileRequest request = sample_request("gfx90a:xnack-");
  request.options = {"-O3", "--gpu-architecture=gfx90a:xnack-"};
  const CompileResult result = compile_with_hiprtc(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  EXPECT_EQ(xnack_bits(parse(result)), 0x200u);
  // An option for other features would build code that the request's arch, under which the
  // result is checked and cached, does not describe.
  request.arch = "gfx90a";
  const CompileResult other = compile_with_hiprtc(request);
  EXPECT_EQ(other.status, HIPACM_ERROR_INVALID_ARGUMENT) << other.error_message;
  EXPECT_NE(other.error_message.find("its features differ"), std::string::npos)
      << other.error_message;
}

TEST(InProcessCompiler, StaticAssertIsACompilationErrorWithLog) {
  CompileRequest request;
  request.source =
      "template <int N> __global__ void k(int* x) { static_assert(N > 1, \"N must exceed one\"); "
      "x[0] = N; }\n";
  request.name_expressions = {"k<1>"};
  request.arch = "gfx90a";
  const CompileResult result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(result.error_message,
            "hiprtcCompileProgram failed: HIPRTC_ERROR_COMPILATION (see log)");
  EXPECT_NE(result.log.find("N must exceed one"), std::string::npos) << result.log;
  EXPECT_TRUE(result.code.empty());
  EXPECT_TRUE(result.lowered_names.empty());
  EXPECT_GT(result.compile_seconds, 0.0);
}

TEST(InProcessCompiler, RejectsBadArchesBeforeHiprtcSeesThem) {
  // Any of these would abort this test process inside hipRTC, as would a real arch that this
  // ROCm's comgr does not list (ROCm 5.2: gfx942 and gfx1100).
  std::vector<std::string> archs = rocm_facts::unlisted_real_processors();
  archs.insert(archs.end(), {rocm_facts::unknown_processor(), "gfx_bogus", "", "gfx1030:xnack-",
                             "gfx90a:xnack"});
  for (const std::string& arch : archs) {
    const CompileResult result = compile_with_hiprtc(sample_request(arch));
    EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT) << arch;
    EXPECT_NE(result.error_message.find("supported processors"), std::string::npos)
        << result.error_message;
    EXPECT_TRUE(result.code.empty());
  }
}

TEST(InProcessCompiler, RejectsBadArchOptions) {
  struct Case {
    std::vector<std::string> options;
    std::string message;
  };
  const std::string unknown = rocm_facts::unknown_processor();
  const Case cases[] = {
      {{"--offload-arch=" + unknown}, "unknown processor '" + unknown + "'"},
      {{"--gpu-architecture=gfx1030"}, "conflicts with the arch 'gfx90a'"},
      {{"--gpu-architecture"}, "needs its value"},
      {{"--offload-arch"}, "needs its value"},
      {{"--gpu-architecture=gfx90a:foo+"}, "unknown feature"},
      {{std::string("-DX=1\0--offload-arch=gfx942", 26)}, "NUL"},
  };
  for (const Case& c : cases) {
    CompileRequest request = sample_request("gfx90a");
    request.options = c.options;
    const CompileResult result = compile_with_hiprtc(request);
    EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT) << c.options[0];
    EXPECT_NE(result.error_message.find(c.message), std::string::npos) << result.error_message;
  }
}

TEST(InProcessCompiler, RejectsEmptyInputsThatHiprtcRefuses) {
  CompileRequest request = sample_request("gfx90a");
  request.source.clear();
  CompileResult result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(result.error_message.find("source is empty"), std::string::npos);
  request = sample_request("gfx90a");
  request.headers = {{"", "int y;"}};
  result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(result.error_message.find("empty name"), std::string::npos);
  request = sample_request("gfx90a");
  request.name_expressions = {"scale<float>", ""};
  result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(result.error_message.find("name expression is empty"), std::string::npos);
}

TEST(InProcessCompiler, RejectsNulBytes) {
  CompileRequest request = sample_request("gfx90a");
  request.source += std::string("\0 trailing", 10);
  const CompileResult result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(result.error_message.find("source contains a NUL"), std::string::npos)
      << result.error_message;
}

TEST(InProcessCompiler, UsesVirtualHeadersAndExplicitRuntimeInclude) {
  // hip/hip_runtime.h comes from the HIP development package, which hipRTC does not need.
  const bool runtime_header = rocm_facts::hip_runtime_header_installed();
  CompileRequest request;
  request.source = std::string(runtime_header ? "#include <hip/hip_runtime.h>\n" : "") + R"(
#include "my_ops.h"
extern "C" __global__ void apply(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
)";
  request.headers = {{"my_ops.h", "__device__ inline float twice(float v) { return 2 * v; }\n"}};
  request.arch = "gfx90a";
  const CompileResult result = compile_with_hiprtc(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  EXPECT_TRUE(has_kernel(parse(result), "apply"));
  if (!runtime_header)
    GTEST_SKIP() << "hip/hip_runtime.h is not installed: only the virtual header was checked";
}

TEST(InProcessCompiler, RepeatedNameExpressionsAndDeviceVariables) {
  CompileRequest request = sample_request("gfx90a");
  request.source += "__device__ int counter;\n";
  request.name_expressions = {"scale<float>", "scale<int>", "scale<float>", "&counter"};
  const CompileResult result = compile_with_hiprtc(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << "\n" << result.log;
  ASSERT_EQ(result.lowered_names.size(), 4u);
  EXPECT_EQ(result.lowered_names[0], result.lowered_names[2]);
  EXPECT_NE(result.lowered_names[0], result.lowered_names[1]);
  EXPECT_EQ(result.lowered_names[3], "counter");
  const CodeObjectInfo info = parse(result);
  EXPECT_TRUE(has_kernel(info, result.lowered_names[1]));
}

TEST(InProcessCompiler, UnknownNameExpressionFailsTheCompile) {
  CompileRequest request = sample_request("gfx90a");
  request.name_expressions = {"scale<float>", "nonexistent<int>"};
  const CompileResult result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILATION);
  EXPECT_NE(result.log.find("nonexistent"), std::string::npos) << result.log;
}

TEST(InProcessCompiler, Trust09_KernelsCompiledOutByTheProgramAreNotRequired) {
  CompileRequest request = sample_request("gfx90a");
  // Behind #ifdef, #if !FLAG and a macro name: the program has no `ghost`,
  // `other` or `MACRO_NAME`, and that is its business.
  request.source +=
      "#ifdef NEVER_DEFINED\nextern \"C\" __global__ void ghost() {}\n#endif\n"
      "#define FLAG 1\n#if !FLAG\nextern \"C\" __global__ void other() {}\n#endif\n"
      "#define MACRO_NAME made_by_macro\nextern \"C\" __global__ void MACRO_NAME(int* p) { *p = 1; "
      "}\n";
  const CompileResult result = compile_with_hiprtc(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << result.log;
  const std::vector<std::string> kernels = code_object_kernels(result.code, "gfx90a");
  EXPECT_NE(std::find(kernels.begin(), kernels.end(), "made_by_macro"), kernels.end());
  EXPECT_EQ(std::find(kernels.begin(), kernels.end(), "ghost"), kernels.end());
}

TEST(InProcessCompiler, ConcurrentCompilesAreSerialized) {
  // Unserialized, overlapping hipRTC 5.2.3 compiles abort the process.
  std::atomic<int> successes{0};
  auto work = [&successes](const std::string& arch) {
    InProcessCompiler compiler;
    for (int i = 0; i < 3; ++i) {
      if (compiler.compile(sample_request(arch)).status == HIPACM_SUCCESS) ++successes;
    }
  };
  boost::thread_group threads;
  threads.create_thread([&] { work("gfx90a"); });
  threads.create_thread([&] { work("gfx1030"); });
  threads.create_thread([&] { work("gfx908"); });
  threads.join_all();
  EXPECT_EQ(successes.load(), 9);
}

}  // namespace
}  // namespace hipacm::backend
