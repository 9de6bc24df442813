// SPDX-License-Identifier: MIT
// amdgpu_real_objects_test.cpp - the header of code objects that the loaded hipRTC really writes,
// for every processor it knows among those the table names: mach, features, code-object version,
// generic version. Processors the loaded comgr does not list are skipped by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

// Arch -> the low 12 bits of e_flags (mach and feature selections) that hipRTC 5.2.3, 6.4.3 and
// 7.2.4 write for it, as llvm-readelf -h shows them.
struct Expected {
  const char* arch;
  std::uint32_t flags;
};
constexpr Expected kExpected[] = {
    {"gfx90a", 0x53f},         {"gfx90a:xnack+", 0x73f},   {"gfx908", 0x530},
    {"gfx1030", 0x036},        {"gfx942", 0x54c},          {"gfx942:sramecc-:xnack+", 0xb4c},
    {"gfx950", 0x54f},         {"gfx1100", 0x041},         {"gfx1101", 0x046},
    {"gfx1102", 0x047},        {"gfx1103", 0x044},         {"gfx1150", 0x043},
    {"gfx1151", 0x04a},        {"gfx1152", 0x055},         {"gfx1153", 0x058},
    {"gfx1200", 0x048},        {"gfx1201", 0x04e},         {"gfx9-generic", 0x151},
    {"gfx9-4-generic", 0x55f}, {"gfx10-1-generic", 0x152}, {"gfx10-3-generic", 0x053},
    {"gfx11-generic", 0x054},  {"gfx12-generic", 0x059},
};

// Test names and failure messages show the arch.
void PrintTo(const Expected& expected, std::ostream* out) { *out << expected.arch; }

// Generic targets have no device library in the comgr builds at hand, so their kernel needs none.
constexpr const char* kLibraryFreeSource =
    "extern \"C\" __global__ void gfill(int* p) { p[__builtin_amdgcn_workitem_id_x()] = 7; }\n";

bool comgr_knows(const std::string& arch) {
  const auto supported = supported_amdgpu_processors();
  static const std::vector<std::string> none;
  const std::vector<std::string>& known = supported ? *supported.value() : none;
  const std::string processor = arch.substr(0, arch.find(':'));
  return std::find(known.begin(), known.end(), processor) != known.end();
}

CompileRequest request_for(const std::string& arch) {
  if (!is_generic_amdgpu_processor(arch.substr(0, arch.find(':'))))
    return testing::sample_request(arch);
  CompileRequest request = testing::source_request(kLibraryFreeSource, "gfill.hip", arch);
  request.options = {"-nogpulib"};
  return request;
}

AmdgpuTarget target_of(const CompileResult& result) {
  const auto info = read_code_object(result.code.data(), result.code.size());
  EXPECT_TRUE(info) << info.failure().message;
  if (!info) return AmdgpuTarget{};
  auto target = decode_amdgpu_target(info.value());
  EXPECT_TRUE(target) << target.failure().message;
  return target ? std::move(target).value() : AmdgpuTarget{};
}

class AmdgpuRealObjects : public ::testing::TestWithParam<Expected> {};

TEST_P(AmdgpuRealObjects, HeaderMatchesTheTable) {
  const std::string arch = GetParam().arch;
  if (!comgr_knows(arch)) GTEST_SKIP() << "the loaded comgr does not list " << arch;
  const CompileResult result = compile_for_target(request_for(arch));
  // Arch validation may refuse generic targets where the hipRTC at hand has no device libraries
  // for them.
  if (result.status == HIPACM_ERROR_INVALID_ARGUMENT && is_generic_amdgpu_processor(arch))
    GTEST_SKIP() << arch << " is refused here: " << result.error_message;
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << arch << ": " << result.error_message << result.log;
  const auto read = read_code_object(result.code.data(), result.code.size());
  ASSERT_TRUE(read) << read.failure().message;
  const CodeObjectInfo& info = read.value();
  EXPECT_EQ(info.flags & 0xfff, GetParam().flags) << std::hex << "e_flags 0x" << info.flags;
  const AmdgpuTarget target = target_of(result);
  EXPECT_EQ(target.processor, arch.substr(0, arch.find(':')));
  EXPECT_EQ(code_object_version(result.code), target.code_object_version);
  EXPECT_GE(target.code_object_version, 4);
  EXPECT_LE(target.code_object_version, kMaxCodeObjectVersion);
  if (target.generic) {
    EXPECT_EQ(target.code_object_version, 6);
    EXPECT_GE(target.generic_version, 1u);
  } else {
    EXPECT_EQ(target.generic_version, 0u);
  }
  // The object answers its own arch; built with xnack on, it answers neither xnack off nor an
  // open request, while the bare processor's "any" object answers both settings.
  const auto own = check_code_object(result.code, arch, {});
  EXPECT_TRUE(own) << own.failure().message;
  if (arch == "gfx90a:xnack+") {
    EXPECT_FALSE(check_code_object(result.code, "gfx90a", {}));
    EXPECT_FALSE(check_code_object(result.code, "gfx90a:xnack-", {}));
  }
  if (arch == "gfx90a") {
    const auto xnack_off = check_code_object(result.code, "gfx90a:xnack-", {});
    EXPECT_TRUE(xnack_off) << xnack_off.failure().message;
    const auto xnack_on = check_code_object(result.code, "gfx90a:xnack+", {});
    EXPECT_TRUE(xnack_on) << xnack_on.failure().message;
  }
  RecordProperty("code_object_version", target.code_object_version);
}

std::string test_name(const ::testing::TestParamInfo<Expected>& info) {
  std::string name = info.param.arch;
  for (char& c : name) {
    if (c == ':' || c == '-') c = '_';
    if (c == '+') c = 'P';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Table, AmdgpuRealObjects, ::testing::ValuesIn(kExpected), test_name);

TEST(AmdgpuRealObjectVersions, AnOlderCodeObjectVersionOnRequestIsAccepted) {
  CompileRequest request = testing::sample_request("gfx90a");
  request.options = {"-mcode-object-version=5"};
  const CompileResult result = compile_for_target(request);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message << result.log;
  const int version = code_object_version(result.code).value_or(0);
  const auto checked = check_code_object(result.code, "gfx90a", result.lowered_names);
  EXPECT_TRUE(checked) << checked.failure().message;
  if (version != 5)
    GTEST_SKIP() << "the loaded hipRTC ignores -mcode-object-version=5 (it wrote v" << version
                 << ")";
  EXPECT_EQ(target_of(result).xnack, FeatureSetting::kAny);
}

}  // namespace
}  // namespace hipacm::backend
