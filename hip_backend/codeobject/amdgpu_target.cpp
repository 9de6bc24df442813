// SPDX-License-Identifier: MIT
// amdgpu_target.cpp - decodes an AMDGPU ELF header's code-object version, processor, target
// features and generic version, and compares them with a requested target id.
#include "hip_backend/codeobject/amdgpu_target.h"

#include <array>
#include <cstring>
#include <string_view>
#include <utility>

#include "hip_backend/codeobject/elf_reader.h"
#include "support/enum_words.h"

namespace hipacm::backend {

namespace {

// EF_AMDGPU_MACH values (LLVM's BinaryFormat/ELF.h and AMDGPUUsage). R600 processors are left
// out because hipRTC never targets them. gfx940 and gfx941 are reserved in current LLVM but were
// emitted by the ROCm 5.x and 6.0 compilers, so objects for them still exist.
struct MachName {
  std::uint8_t mach;
  const char* name;
};
constexpr std::array<MachName, 63> kAmdgpuMachNames = {{
    {0x20, "gfx600"},          {0x21, "gfx601"},          {0x22, "gfx700"},
    {0x23, "gfx701"},          {0x24, "gfx702"},          {0x25, "gfx703"},
    {0x26, "gfx704"},          {0x28, "gfx801"},          {0x29, "gfx802"},
    {0x2a, "gfx803"},          {0x2b, "gfx810"},          {0x2c, "gfx900"},
    {0x2d, "gfx902"},          {0x2e, "gfx904"},          {0x2f, "gfx906"},
    {0x30, "gfx908"},          {0x31, "gfx909"},          {0x32, "gfx90c"},
    {0x33, "gfx1010"},         {0x34, "gfx1011"},         {0x35, "gfx1012"},
    {0x36, "gfx1030"},         {0x37, "gfx1031"},         {0x38, "gfx1032"},
    {0x39, "gfx1033"},         {0x3a, "gfx602"},          {0x3b, "gfx705"},
    {0x3c, "gfx805"},          {0x3d, "gfx1035"},         {0x3e, "gfx1034"},
    {0x3f, "gfx90a"},          {0x40, "gfx940"},          {0x41, "gfx1100"},
    {0x42, "gfx1013"},         {0x43, "gfx1150"},         {0x44, "gfx1103"},
    {0x45, "gfx1036"},         {0x46, "gfx1101"},         {0x47, "gfx1102"},
    {0x48, "gfx1200"},         {0x49, "gfx1250"},         {0x4a, "gfx1151"},
    {0x4b, "gfx941"},          {0x4c, "gfx942"},          {0x4e, "gfx1201"},
    {0x4f, "gfx950"},          {0x50, "gfx1310"},         {0x51, "gfx9-generic"},
    {0x52, "gfx10-1-generic"}, {0x53, "gfx10-3-generic"}, {0x54, "gfx11-generic"},
    {0x55, "gfx1152"},         {0x57, "gfx1154"},         {0x58, "gfx1153"},
    {0x59, "gfx12-generic"},   {0x5a, "gfx1251"},         {0x5b, "gfx12-5-generic"},
    {0x5c, "gfx1172"},         {0x5d, "gfx1170"},         {0x5e, "gfx1171"},
    {0x5f, "gfx9-4-generic"},  {0x62, "gfx11-7-generic"}, {0x63, "gfx13-generic"},
}};

constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kMachineOffset = 18;
constexpr std::uint32_t kMachMask = 0xff;
// Code object v4 and later: two-bit selections.
constexpr std::uint32_t kXnackMask = 0x300;
constexpr std::uint32_t kXnackAny = 0x100;
constexpr std::uint32_t kXnackOff = 0x200;
constexpr std::uint32_t kSrameccMask = 0xc00;
constexpr std::uint32_t kSrameccAny = 0x400;
constexpr std::uint32_t kSrameccOff = 0x800;
// Code object v3: one bit each, set when the feature is on.
constexpr std::uint32_t kXnackOnV3 = 0x100;
constexpr std::uint32_t kSrameccOnV3 = 0x200;
constexpr unsigned kGenericVersionShift = 24;

Failure fail(std::string message) { return Failure{HIPACM_ERROR_COMPILATION, std::move(message)}; }

FeatureSetting selection(std::uint32_t bits, std::uint32_t any, std::uint32_t off) {
  if (bits == 0) return FeatureSetting::kUnsupported;
  if (bits == any) return FeatureSetting::kAny;
  return bits == off ? FeatureSetting::kOff : FeatureSetting::kOn;
}

constexpr EnumWord<FeatureSetting> kSettingNames[] = {{FeatureSetting::kUnsupported, "unsupported"},
                                                      {FeatureSetting::kAny, "any"},
                                                      {FeatureSetting::kOff, "off"},
                                                      {FeatureSetting::kOn, "on"}};

const char* setting_name(FeatureSetting setting) {
  return word_of_value(kSettingNames, setting, "?");
}

// The requested "+", "-" or open setting of one feature against the object's. Code built for
// "any" runs with the feature on or off, so it answers every request; code built with it on or
// off answers only that request, never an open one.
Expected<void> feature_answers(const char* name, char requested, FeatureSetting found,
                               int version) {
  if (found == FeatureSetting::kAny) return {};
  if (requested == '+' && found == FeatureSetting::kOn) return {};
  if (requested == '-' && found == FeatureSetting::kOff) return {};
  // Code object v3 can only say on or off, so an open request takes either.
  if (requested == 0 && (found == FeatureSetting::kUnsupported || version == 3)) return {};
  const std::string wanted = requested == 0
                                 ? std::string("any or unsupported")
                                 : std::string(requested == '+' ? "on or any" : "off or any");
  return fail(std::string("code object has ") + name + " " + setting_name(found) +
              ", the requested arch needs " + wanted);
}

}  // namespace

std::string amdgpu_processor_from_flags(std::uint32_t e_flags) {
  const auto mach = static_cast<std::uint8_t>(e_flags & kMachMask);
  for (const MachName& entry : kAmdgpuMachNames) {
    if (entry.mach == mach) return entry.name;
  }
  return "";
}

bool is_generic_amdgpu_processor(const std::string& processor) {
  return processor.ends_with("-generic");
}

std::optional<int> code_object_version(const std::uint8_t* data, std::size_t size) {
  static constexpr std::array<std::uint8_t, 7> kIdent = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  if (data == nullptr || size < kEhdrSize || std::memcmp(data, kIdent.data(), kIdent.size()) != 0)
    return std::nullopt;
  const auto machine =
      static_cast<std::uint16_t>(data[kMachineOffset] | (data[kMachineOffset + 1] << 8));
  if (machine != kElfMachineAmdgpu || data[7] != kElfOsabiAmdgpuHsa) return std::nullopt;
  return data[8] + 2;
}

std::optional<int> code_object_version(const std::vector<std::uint8_t>& code) {
  return code_object_version(code.data(), code.size());
}

std::string code_object_runtime_note(int version) {
  // ROCm 5.2.3's loader maps EI_ABIVERSION 1..3 to v3..v5 and refuses 4 (v6). LLVM's switch to v6
  // by default was announced as needing ROCm 6.3 to run what it compiles.
  if (version == 5) {
    return "code object v5 needs a ROCm runtime that reads v5 (ROCm 5.2.3's loader does; older "
           "releases may not)";
  }
  if (version >= 6) {
    return "code object v" + std::to_string(version) +
           " needs ROCm 6.3's runtime or newer (ROCm 5.2.3's loader refuses it)";
  }
  return "";
}

Expected<AmdgpuTarget> decode_amdgpu_target(const CodeObjectInfo& info) {
  AmdgpuTarget target;
  if (info.osabi != kElfOsabiAmdgpuHsa) {
    return fail("code object has EI_OSABI " + std::to_string(info.osabi) +
                ", expected ELFOSABI_AMDGPU_HSA (64)");
  }
  const int version = info.abi_version + 2;
  if (version < kMinCodeObjectVersion || version > kMaxCodeObjectVersion) {
    return fail("code object v" + std::to_string(version) + " (EI_ABIVERSION " +
                std::to_string(info.abi_version) + ") is not accepted: hipacm reads v" +
                std::to_string(kMinCodeObjectVersion) + " to v" +
                std::to_string(kMaxCodeObjectVersion));
  }
  target.code_object_version = version;
  target.processor = amdgpu_processor_from_flags(info.flags);
  target.generic = is_generic_amdgpu_processor(target.processor);
  if (version == 3) {
    target.xnack = (info.flags & kXnackOnV3) != 0 ? FeatureSetting::kOn : FeatureSetting::kOff;
    target.sramecc = (info.flags & kSrameccOnV3) != 0 ? FeatureSetting::kOn : FeatureSetting::kOff;
  } else {
    target.xnack = selection(info.flags & kXnackMask, kXnackAny, kXnackOff);
    target.sramecc = selection(info.flags & kSrameccMask, kSrameccAny, kSrameccOff);
  }
  if (version >= 6) target.generic_version = info.flags >> kGenericVersionShift;
  if (target.generic && version < 6) {
    return fail("code object v" + std::to_string(version) + " names the generic processor " +
                target.processor + ", which only code object v6 and later can hold");
  }
  if (target.generic && target.generic_version == 0) {
    return fail("code object for the generic processor " + target.processor +
                " has generic version 0 (EF_AMDGPU_GENERIC_VERSION must be 1 or more)");
  }
  return target;
}

Expected<void> target_answers_arch(const AmdgpuTarget& target, const std::string& arch) {
  const std::string wanted = arch.substr(0, arch.find(':'));
  if (target.processor != wanted) {
    return fail("code object is for processor '" +
                (target.processor.empty() ? std::string("unknown") : target.processor) +
                "', expected '" + wanted + "'");
  }
  char xnack = 0;
  char sramecc = 0;
  std::string_view rest = std::string_view(arch).substr(wanted.size());
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the ':'
    const std::string_view feature = rest.substr(0, rest.find(':'));
    rest.remove_prefix(feature.size());
    if (feature.empty()) continue;
    const char sign = feature.back();
    const std::string_view name = feature.substr(0, feature.size() - 1);
    if (name == "xnack") xnack = sign;
    if (name == "sramecc") sramecc = sign;
  }
  if (Expected<void> xnack_answers =
          feature_answers("xnack", xnack, target.xnack, target.code_object_version);
      !xnack_answers)
    return xnack_answers;
  return feature_answers("sramecc", sramecc, target.sramecc, target.code_object_version);
}

std::string target_id(const AmdgpuTarget& target) {
  if (target.processor.empty()) return "";
  std::string id = target.processor;
  if (target.sramecc == FeatureSetting::kOn) id += ":sramecc+";
  // Code object v3 records only "on": a clear bit may mean a processor without the feature.
  const bool off_recorded = target.code_object_version >= 4;
  if (off_recorded && target.sramecc == FeatureSetting::kOff) id += ":sramecc-";
  if (target.xnack == FeatureSetting::kOn) id += ":xnack+";
  if (off_recorded && target.xnack == FeatureSetting::kOff) id += ":xnack-";
  return id;
}

}  // namespace hipacm::backend
