// SPDX-License-Identifier: MIT
// amdgpu_occupancy.h - how many waves of a kernel one SIMD can hold, as its VGPR and SGPR counts
// allow, from each processor family's register file size and allocation granule.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hipacm::backend {

/// A processor family's figures, as LLVM's AMDGPU backend uses them (AMDGPUBaseInfo.cpp:
/// getMaxWavesPerEU, getTotalNumVGPRs, getVGPRAllocGranule, getOccupancyWithNumSGPRs).
struct AmdgpuRegisterFile {
  unsigned max_waves_per_simd = 0;  ///< the hardware's wave slots per SIMD
  unsigned vgprs_per_lane = 0;      ///< VGPRs one SIMD lane holds, all waves together
  unsigned vgpr_granule = 0;        ///< VGPRs are allocated in multiples of this
  /// gfx6 to gfx9: SGPRs limit the waves too; gfx10 and later give every wave its own SGPRs.
  bool sgprs_limit = false;
  bool sgpr_table_gfx8 = false;  ///< the gfx8/gfx9 SGPR table (800 SGPRs), else gfx6/gfx7's
};

/// The family of a processor ("gfx90a", "gfx1030"; features such as ":xnack+" ignored) for a
/// wavefront size (32 or 64; gfx6 to gfx9 are always 64). nullopt for processors it does not
/// know, generic targets included: their figures differ between members.
std::optional<AmdgpuRegisterFile> amdgpu_register_file(std::string_view processor,
                                                       std::uint64_t wavefront_size);

struct WaveLimits {
  unsigned max_waves = 0;  ///< the processor's wave slots per SIMD
  unsigned by_vgprs = 0;   ///< the waves the kernel's VGPRs (with AGPRs, where unified) allow
  std::optional<unsigned> by_sgprs;  ///< gfx6 to gfx9 only
  unsigned waves = 0;                ///< the smallest of the three
};

/// The limits for a kernel using `vgprs` VGPRs (the metadata's .vgpr_count) and `sgprs` SGPRs
/// (.sgpr_count).
WaveLimits amdgpu_wave_limits(const AmdgpuRegisterFile& file, std::uint64_t vgprs,
                              std::uint64_t sgprs);

}  // namespace hipacm::backend
