// SPDX-License-Identifier: MIT
// amdgpu_target_test.cpp - code-object versions, processors, target features and generic versions
// decoded from synthetic AMDGPU headers, and the check's verdict on each.
#include "hip_backend/codeobject/amdgpu_target.h"

#include <gtest/gtest.h>

#include "hip_backend/codeobject/code_object_check.h"
#include "tests/hip_backend/codeobject/synthetic_code_objects.h"

namespace hipacm::backend {
namespace {

using testing::Bytes;
using testing::make_amdgpu_elf;

// Every processor comgr 7.2 lists, with the EF_AMDGPU_MACH value that real objects compiled for
// it carry (checked with llvm-readelf -h on objects from hipRTC 6.4.3 and 7.2.4).
struct Processor {
  const char* name;
  std::uint32_t mach;
};
constexpr Processor kComgr72Processors[] = {
    {"gfx600", 0x20},         {"gfx601", 0x21},          {"gfx602", 0x3a},
    {"gfx700", 0x22},         {"gfx701", 0x23},          {"gfx702", 0x24},
    {"gfx703", 0x25},         {"gfx704", 0x26},          {"gfx705", 0x3b},
    {"gfx801", 0x28},         {"gfx802", 0x29},          {"gfx803", 0x2a},
    {"gfx805", 0x3c},         {"gfx810", 0x2b},          {"gfx900", 0x2c},
    {"gfx902", 0x2d},         {"gfx904", 0x2e},          {"gfx906", 0x2f},
    {"gfx908", 0x30},         {"gfx909", 0x31},          {"gfx90a", 0x3f},
    {"gfx90c", 0x32},         {"gfx942", 0x4c},          {"gfx950", 0x4f},
    {"gfx1010", 0x33},        {"gfx1011", 0x34},         {"gfx1012", 0x35},
    {"gfx1013", 0x42},        {"gfx1030", 0x36},         {"gfx1031", 0x37},
    {"gfx1032", 0x38},        {"gfx1033", 0x39},         {"gfx1034", 0x3e},
    {"gfx1035", 0x3d},        {"gfx1036", 0x45},         {"gfx1100", 0x41},
    {"gfx1101", 0x46},        {"gfx1102", 0x47},         {"gfx1103", 0x44},
    {"gfx1150", 0x43},        {"gfx1151", 0x4a},         {"gfx1152", 0x55},
    {"gfx1153", 0x58},        {"gfx1200", 0x48},         {"gfx1201", 0x4e},
    {"gfx1250", 0x49},        {"gfx1251", 0x5a},         {"gfx9-generic", 0x51},
    {"gfx9-4-generic", 0x5f}, {"gfx10-1-generic", 0x52}, {"gfx10-3-generic", 0x53},
    {"gfx11-generic", 0x54},  {"gfx12-generic", 0x59},
};

CodeObjectInfo info_of(const Bytes& image) {
  Expected<CodeObjectInfo> info = read_code_object(image.data(), image.size());
  EXPECT_TRUE(info) << info.failure().message;
  return info ? std::move(info).value() : CodeObjectInfo{};
}

AmdgpuTarget decoded(int version, std::uint32_t flags) {
  Expected<AmdgpuTarget> target = decode_amdgpu_target(info_of(make_amdgpu_elf(version, flags)));
  EXPECT_TRUE(target) << target.failure().message;
  return target ? std::move(target).value() : AmdgpuTarget{};
}

std::string refusal(int version, std::uint32_t flags, const std::string& arch) {
  const Expected<void> checked =
      check_amdgpu_code_object(make_amdgpu_elf(version, flags), arch, {"k"});
  EXPECT_FALSE(checked) << arch << " accepted";
  return checked.failure().message;
}

TEST(AmdgpuTarget, KnowsTheMachOfEveryProcessorComgr72Lists) {
  for (const Processor& p : kComgr72Processors) {
    EXPECT_EQ(amdgpu_processor_from_flags(p.mach), p.name);
    const std::string name = p.name;
    EXPECT_EQ(is_generic_amdgpu_processor(name), name.ends_with("-generic")) << name;
    // Generic processors exist only from code object v6 on, with a generic version.
    const int version = is_generic_amdgpu_processor(name) ? 6 : 5;
    const std::uint32_t flags = p.mach | (version == 6 ? 1u << 24 : 0u);
    const Expected<void> checked =
        check_amdgpu_code_object(make_amdgpu_elf(version, flags), name, {"k"});
    EXPECT_TRUE(checked) << name << ": " << checked.failure().message;
  }
}

TEST(AmdgpuTarget, ReadsTheCodeObjectVersionFromTheHeaderAlone) {
  for (int version = 2; version <= 7; ++version) {
    EXPECT_EQ(code_object_version(make_amdgpu_elf(version, 0x3f)), version);
  }
  Bytes other_abi = make_amdgpu_elf(6, 0x3f);
  other_abi[7] = 0;  // ELFOSABI_NONE
  EXPECT_EQ(code_object_version(other_abi), std::nullopt);
  Bytes cuda = make_amdgpu_elf(6, 0x3f);
  cuda[18] = 190;  // EM_CUDA
  EXPECT_EQ(code_object_version(cuda), std::nullopt);
  Bytes elf32 = make_amdgpu_elf(6, 0x3f);
  elf32[4] = 1;
  EXPECT_EQ(code_object_version(elf32), std::nullopt);
  const Bytes whole = make_amdgpu_elf(6, 0x3f);
  EXPECT_EQ(code_object_version(whole.data(), 63), std::nullopt);
  EXPECT_EQ(code_object_version(whole.data(), 64), 6);
  EXPECT_EQ(code_object_version(nullptr, 64), std::nullopt);
  EXPECT_EQ(code_object_version(testing::kernel_module({"k"}).bytes()), std::nullopt);
}

TEST(AmdgpuTarget, AcceptsCodeObjectsV3ToV6AndRefusesTheRest) {
  for (int version = 3; version <= 6; ++version) {
    const Expected<void> checked =
        check_amdgpu_code_object(make_amdgpu_elf(version, 0x53f), "gfx90a", {"k"});
    EXPECT_TRUE(checked) << "v" << version << ": " << checked.failure().message;
  }
  EXPECT_NE(refusal(2, 0x3f, "gfx90a").find("code object v2 (EI_ABIVERSION 0) is not accepted"),
            std::string::npos);
  const std::string v7 = refusal(7, 0x53f, "gfx90a");
  EXPECT_NE(v7.find("code object v7 (EI_ABIVERSION 5) is not accepted: hipacm reads v3 to v6"),
            std::string::npos)
      << v7;
  EXPECT_NE(refusal(257, 0x3f, "gfx90a").find("EI_ABIVERSION 255"), std::string::npos);
  Bytes no_hsa = make_amdgpu_elf(5, 0x53f);
  no_hsa[7] = 65;  // ELFOSABI_AMDGPU_PAL
  const Expected<void> checked = check_amdgpu_code_object(no_hsa, "gfx90a", {"k"});
  EXPECT_FALSE(checked);
  const std::string& error = checked.failure().message;
  EXPECT_NE(error.find("EI_OSABI 65, expected ELFOSABI_AMDGPU_HSA (64)"), std::string::npos)
      << error;
}

TEST(AmdgpuTarget, DecodesFeatureSelectionsOfV4AndLater) {
  const AmdgpuTarget any = decoded(4, 0x53f);
  EXPECT_EQ(any.processor, "gfx90a");
  EXPECT_EQ(any.xnack, FeatureSetting::kAny);
  EXPECT_EQ(any.sramecc, FeatureSetting::kAny);
  EXPECT_EQ(target_id(any), "gfx90a");
  const AmdgpuTarget xnack_on = decoded(5, 0x73f);
  EXPECT_EQ(xnack_on.xnack, FeatureSetting::kOn);
  EXPECT_EQ(target_id(xnack_on), "gfx90a:xnack+");
  // What hipRTC 6.4 and 7.2 write for gfx942:sramecc-:xnack+.
  const AmdgpuTarget mixed = decoded(6, 0xb4c);
  EXPECT_EQ(mixed.sramecc, FeatureSetting::kOff);
  EXPECT_EQ(mixed.xnack, FeatureSetting::kOn);
  EXPECT_EQ(target_id(mixed), "gfx942:sramecc-:xnack+");
  const AmdgpuTarget none = decoded(6, 0x41);
  EXPECT_EQ(none.xnack, FeatureSetting::kUnsupported);
  EXPECT_EQ(none.sramecc, FeatureSetting::kUnsupported);
  EXPECT_EQ(none.generic_version, 0u);
  EXPECT_EQ(target_id(none), "gfx1100");
}

TEST(AmdgpuTarget, CodeObjectV3RecordsOnlyFeaturesThatAreOn) {
  const AmdgpuTarget v3 = decoded(3, 0x13f);
  EXPECT_EQ(v3.xnack, FeatureSetting::kOn);
  EXPECT_EQ(v3.sramecc, FeatureSetting::kOff);
  EXPECT_EQ(target_id(v3), "gfx90a:xnack+");
  const Bytes image = make_amdgpu_elf(3, 0x13f);
  const Expected<void> bare = check_amdgpu_code_object(image, "gfx90a", {"k"});
  EXPECT_TRUE(bare) << bare.failure().message;
  const Expected<void> xnack_on = check_amdgpu_code_object(image, "gfx90a:xnack+", {"k"});
  EXPECT_TRUE(xnack_on) << xnack_on.failure().message;
  EXPECT_FALSE(check_amdgpu_code_object(image, "gfx90a:xnack-", {"k"}));
}

TEST(AmdgpuTarget, RequestedFeaturesMustBeTheObjects) {
  struct Case {
    std::uint32_t flags;
    const char* arch;
    bool accepted;
  };
  const Case cases[] = {
      {0x53f, "gfx90a", true},
      {0x53f, "gfx90a:xnack+", true},  // "any" runs with xnack on too
      {0x53f, "gfx90a:sramecc+:xnack-", true},
      {0x73f, "gfx90a:xnack+", true},
      {0x73f, "gfx90a", false},  // an xnack+ object is no answer to the bare processor
      {0x73f, "gfx90a:xnack-", false},
      {0x63f, "gfx90a:xnack-", true},
      {0xf3f, "gfx90a:sramecc+:xnack+", true},
      {0xf3f, "gfx90a:xnack+:sramecc+", true},
      {0xf3f, "gfx90a:sramecc-:xnack+", false},
      {0xb4c, "gfx942:sramecc-:xnack+", true},
      {0xb4c, "gfx942:xnack+", false},  // sramecc off answers no open sramecc
      {0xb4c, "gfx942:sramecc+:xnack+", false},
      {0x41, "gfx1100", true},
      {0x41, "gfx1101", false},
  };
  for (const Case& c : cases) {
    const Expected<void> checked =
        check_amdgpu_code_object(make_amdgpu_elf(5, c.flags), c.arch, {"k"});
    EXPECT_EQ(checked.has_value(), c.accepted)
        << c.arch << " flags " << std::hex << c.flags << ": " << checked.failure().message;
  }
  const std::string error = refusal(5, 0x73f, "gfx90a:xnack-");
  EXPECT_NE(error.find("code object has xnack on, the requested arch needs off or any"),
            std::string::npos)
      << error;
  const std::string open = refusal(5, 0x73f, "gfx90a");
  EXPECT_NE(open.find("xnack on, the requested arch needs any or unsupported"), std::string::npos)
      << open;
  EXPECT_NE(refusal(6, 0x41, "gfx1101").find("'gfx1100', expected 'gfx1101'"), std::string::npos);
}

TEST(AmdgpuTarget, GenericProcessorsNeedV6AndAGenericVersion) {
  // What hipRTC 6.4 and 7.2 write for gfx11-generic and gfx9-4-generic.
  const AmdgpuTarget gfx11 = decoded(6, 0x1000054);
  EXPECT_EQ(gfx11.processor, "gfx11-generic");
  EXPECT_TRUE(gfx11.generic);
  EXPECT_EQ(gfx11.generic_version, 1u);
  const AmdgpuTarget gfx94 = decoded(6, 0x100055f);
  EXPECT_EQ(gfx94.processor, "gfx9-4-generic");
  EXPECT_EQ(gfx94.sramecc, FeatureSetting::kAny);
  EXPECT_EQ(gfx94.xnack, FeatureSetting::kAny);
  EXPECT_EQ(decoded(6, 0xfe000054).generic_version, 0xfeu);
  const Expected<void> checked =
      check_amdgpu_code_object(make_amdgpu_elf(6, 0x1000054), "gfx11-generic", {"k"});
  EXPECT_TRUE(checked) << checked.failure().message;
  // A generic object answers only a request for the generic target itself.
  EXPECT_NE(refusal(6, 0x1000054, "gfx1100").find("'gfx11-generic', expected 'gfx1100'"),
            std::string::npos);
  EXPECT_NE(refusal(5, 0x54, "gfx11-generic").find("only code object v6 and later can hold"),
            std::string::npos);
  EXPECT_NE(refusal(6, 0x54, "gfx11-generic").find("generic version 0"), std::string::npos);
  // Bits 24-31 mean nothing before v6.
  EXPECT_EQ(decoded(5, 0x1000041).generic_version, 0u);
}

TEST(AmdgpuTarget, UnknownMachIsReportedWithItsFlags) {
  const std::string error = refusal(6, 0x56, "gfx90a");  // reserved
  EXPECT_NE(error.find("unknown (e_flags 86)"), std::string::npos) << error;
}

TEST(AmdgpuTarget, SaysWhichRuntimesLoadV5AndV6) {
  EXPECT_EQ(code_object_runtime_note(4), "");
  EXPECT_NE(code_object_runtime_note(5).find("ROCm 5.2.3's loader does"), std::string::npos);
  EXPECT_NE(code_object_runtime_note(6).find("ROCm 6.3's runtime or newer"), std::string::npos);
}

}  // namespace
}  // namespace hipacm::backend
