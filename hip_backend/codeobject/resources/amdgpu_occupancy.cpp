// SPDX-License-Identifier: MIT
// amdgpu_occupancy.cpp - the register file figures of each AMDGPU processor family and the waves
// per SIMD they allow a kernel.
#include "hip_backend/codeobject/resources/amdgpu_occupancy.h"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace hipacm::backend {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::optional<AmdgpuRegisterFile> amdgpu_register_file(std::string_view processor,
                                                       std::uint64_t wavefront_size) {
  processor = processor.substr(0, processor.find(':'));
  if (!starts_with(processor, "gfx") || processor.find("generic") != std::string_view::npos)
    return std::nullopt;
  const bool wave32 = wavefront_size == 32;
  const std::string_view number = processor.substr(3);
  if (number.size() == 3 && number[0] >= '6' && number[0] <= '9') {
    if (wave32) return std::nullopt;  // gfx6 to gfx9 run wave64 only
    const bool gfx8_up = number[0] >= '8';
    // gfx90a and gfx94x/gfx950 unify VGPRs and AGPRs in one 512-entry file.
    if (one_of(processor, {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"}))
      return AmdgpuRegisterFile{8, 512, 8, true, true};
    return AmdgpuRegisterFile{10, 256, 4, true, gfx8_up};
  }
  if (number.size() != 4 || number[0] != '1' || number[1] < '0' || number[1] > '2')
    return std::nullopt;
  const unsigned scale = wave32 ? 2 : 1;
  if (number[1] == '0') {
    if (number[2] == '1') return AmdgpuRegisterFile{20, 512 * scale, 4 * scale, false, false};
    if (number[2] == '3') return AmdgpuRegisterFile{16, 512 * scale, 8 * scale, false, false};
    return std::nullopt;
  }
  // gfx1100, gfx1101, gfx1151, gfx1200 and gfx1201 have half as many VGPRs again.
  if (one_of(processor, {"gfx1100", "gfx1101", "gfx1151", "gfx1200", "gfx1201"}))
    return AmdgpuRegisterFile{16, 768 * scale, 12 * scale, false, false};
  return AmdgpuRegisterFile{16, 512 * scale, 8 * scale, false, false};
}

WaveLimits amdgpu_wave_limits(const AmdgpuRegisterFile& file, std::uint64_t vgprs,
                              std::uint64_t sgprs) {
  WaveLimits limits;
  limits.max_waves = file.max_waves_per_simd;
  // Fewer VGPRs than one granule still take one granule.
  const std::uint64_t granules =
      std::max<std::uint64_t>(1, (vgprs + file.vgpr_granule - 1) / file.vgpr_granule);
  const std::uint64_t allocated = granules * file.vgpr_granule;
  limits.by_vgprs = static_cast<unsigned>(
      std::clamp<std::uint64_t>(file.vgprs_per_lane / allocated, 1, file.max_waves_per_simd));
  limits.waves = limits.by_vgprs;
  if (file.sgprs_limit) {
    // The SGPR steps of getOccupancyWithNumSGPRs: gfx8 and gfx9 share 800 SGPRs, gfx6 and gfx7
    // have their own table.
    struct Step {
      std::uint64_t up_to;
      unsigned waves;
    };
    static constexpr std::array<Step, 3> kGfx8{{{80, 10}, {88, 9}, {100, 8}}};
    static constexpr std::array<Step, 5> kGfx6{{{48, 10}, {56, 9}, {64, 8}, {72, 7}, {80, 6}}};
    unsigned waves = file.sgpr_table_gfx8 ? 7 : 5;
    auto pick = [&](const auto& steps) {
      for (const Step& step : steps)
        if (sgprs <= step.up_to) {
          waves = step.waves;
          return;
        }
    };
    if (file.sgpr_table_gfx8)
      pick(kGfx8);
    else
      pick(kGfx6);
    limits.by_sgprs = std::min(waves, file.max_waves_per_simd);
    limits.waves = std::min(limits.waves, *limits.by_sgprs);
  }
  limits.waves = std::min(limits.waves, limits.max_waves);
  return limits;
}

}  // namespace hipacm::backend
