// SPDX-License-Identifier: MIT
// amdgpu_arch_rocm_test.cpp - the arch rules against the ROCm this process loads: the history
// table matches its comgr, generic targets and amdgcnspirv never reach its hipRTC, and the newer
// processors compile where it lists them.
#include <gtest/gtest.h>

#include <algorithm>

#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/dispatch/arch_validation.h"
#include "hip_backend/hiprtc/amdgpu_arch_history.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/hiprtc_release.h"
#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::sample_request;

// Every name the history table covers.
constexpr const char* kTableNames[] = {
    "gfx940",        "gfx941",       "gfx942",         "gfx950",          "gfx1100",
    "gfx1101",       "gfx1102",      "gfx1103",        "gfx1150",         "gfx1151",
    "gfx1152",       "gfx1153",      "gfx1200",        "gfx1201",         "gfx1250",
    "gfx1251",       "gfx9-generic", "gfx9-4-generic", "gfx10-1-generic", "gfx10-3-generic",
    "gfx11-generic", "gfx12-generic"};

HiprtcFacts loaded_hiprtc() {
  const Expected<const HiprtcApi*> loaded = load_hiprtc();
  EXPECT_TRUE(loaded) << loaded.failure().message;
  return loaded_hiprtc_facts();
}

bool comgr_lists(const std::string& name) {
  const auto supported = supported_amdgpu_processors();
  EXPECT_TRUE(supported) << supported.failure().message;
  static const std::vector<std::string> none;
  const std::vector<std::string>& list = supported ? *supported.value() : none;
  EXPECT_FALSE(list.empty());
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(AmdgpuArchOnThisRocm, HiprtcNamesItsRelease) {
  const HiprtcFacts hiprtc = loaded_hiprtc();
  EXPECT_TRUE(hiprtc.library.starts_with("libhiprtc.so.") ||
              hiprtc.library.starts_with("libamdhip64.so."))
      << hiprtc.library;
  EXPECT_TRUE(hiprtc.release.has_value()) << hiprtc.library;
  EXPECT_FALSE(hiprtc.emits_spirv);
}

TEST(AmdgpuArchOnThisRocm, HistoryTableMatchesThisComgr) {
  const HiprtcFacts hiprtc = loaded_hiprtc();
  ASSERT_TRUE(hiprtc.release.has_value()) << hiprtc.library;
  const RocmRelease release = *hiprtc.release;
  if (release != RocmRelease{5, 2} && release != RocmRelease{6, 4} && release != RocmRelease{7, 2})
    GTEST_SKIP() << "ROCm " << to_string(release)
                 << " is not one of the releases the table checked";
  for (const char* name : kTableNames) {
    const ArchHistory* row = find_arch_history(name);
    ASSERT_NE(row, nullptr) << name;
    const bool expected = row->first_known && release >= *row->first_known;
    EXPECT_EQ(comgr_lists(name), expected) << name << " on ROCm " << to_string(release);
  }
}

TEST(AmdgpuArchOnThisRocm, UnlistedProcessorsNameTheReleasesThatKnowThem) {
  const HiprtcFacts hiprtc = loaded_hiprtc();
  int unlisted = 0;
  for (const char* name : kTableNames) {
    if (comgr_lists(name)) continue;
    ++unlisted;
    std::string error;
    Expected<void> checked;
    checked = validate_amdgpu_arch(name, nullptr, &hiprtc);
    error = checked.failure().message;
    EXPECT_FALSE(checked) << name;
    EXPECT_TRUE(
        contains(error, " is not known to this ROCm (hipRTC " + hiprtc.library + ", comgr "))
        << error;
    EXPECT_TRUE(contains(error, arch_history_text(*find_arch_history(name)))) << error;
  }
  EXPECT_GT(unlisted, 0) << "gfx940 and gfx941 are listed by no release checked";
}

TEST(AmdgpuArchOnThisRocm, GenericTargetsNeverReachHiprtc) {
  const HiprtcFacts hiprtc = loaded_hiprtc();
  for (const char* name : {"gfx11-generic", "gfx9-4-generic", "gfx12-generic"}) {
    const std::string expected = comgr_lists(name)
                                     ? std::string(name) + " is a generic target"
                                     : std::string(name) + " is not known to this ROCm";
    const CompileResult result = compile_with_hiprtc(sample_request(name));
    EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT) << result.error_message;
    EXPECT_TRUE(contains(result.error_message, expected)) << result.error_message;
    EXPECT_EQ(result.log, "") << "hipRTC ran: " << result.log;
    const Expected<void> valid = validate_arch(name);
    EXPECT_FALSE(valid) << name;
    const std::string& error = valid.failure().message;
    EXPECT_EQ(valid.failure().status, HIPACM_ERROR_INVALID_ARGUMENT) << name;
    EXPECT_TRUE(contains(error, expected)) << error;
  }
}

TEST(AmdgpuArchOnThisRocm, SpirvNeverReachesHiprtc) {
  // ROCm 5.2's and 6.4's hipRTC abort the process on amdgcnspirv: this test would not return.
  const HiprtcFacts hiprtc = loaded_hiprtc();
  CompileRequest request = sample_request("amdgcnspirv");
  request.name_expressions.clear();
  const CompileResult result = compile_with_hiprtc(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT) << result.error_message;
  EXPECT_TRUE(
      contains(result.error_message, "portable SPIR-V is not available (hipRTC " + hiprtc.library))
      << result.error_message;
  EXPECT_EQ(result.log, "");
  const Expected<void> valid = validate_arch("amdgcnspirv");
  EXPECT_FALSE(valid);
  const std::string& error = valid.failure().message;
  EXPECT_EQ(valid.failure().status, HIPACM_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(error, "portable SPIR-V is not available")) << error;
  CompileRequest in_option = sample_request("gfx90a");
  in_option.options = {"--offload-arch=amdgcnspirv"};
  EXPECT_EQ(compile_with_hiprtc(in_option).status, HIPACM_ERROR_INVALID_ARGUMENT);
}

TEST(AmdgpuArchOnThisRocm, NewerProcessorsCompileWhereListed) {
  for (const char* name : {"gfx942", "gfx1100", "gfx1201"}) {
    const CompileResult result = compile_with_hiprtc(sample_request(name));
    if (!comgr_lists(name)) {
      EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT) << name;
      EXPECT_TRUE(contains(result.error_message, std::string(name) + " (")) << result.error_message;
      EXPECT_TRUE(contains(result.error_message, "is not known to this ROCm"))
          << result.error_message;
      continue;
    }
    ASSERT_EQ(result.status, HIPACM_SUCCESS) << name << ": " << result.error_message << "\n"
                                             << result.log;
    const Expected<CodeObjectInfo> read = read_code_object(result.code.data(), result.code.size());
    ASSERT_TRUE(read) << read.failure().message;
    const CodeObjectInfo& info = read.value();
    EXPECT_EQ(amdgpu_processor_from_flags(info.flags), name);
    EXPECT_EQ(result.lowered_names, std::vector<std::string>{"_Z5scaleIfEvPT_S0_"});
  }
}

}  // namespace
}  // namespace hipacm::backend
