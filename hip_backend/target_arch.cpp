// SPDX-License-Identifier: MIT
// target_arch.cpp - which platform an arch names, from its prefix alone.
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

constexpr std::string_view kCubinPrefix = "sm_";
constexpr std::string_view kPtxPrefix = "compute_";
constexpr std::string_view kGfxPrefix = "gfx";

}  // namespace

bool is_nvidia_arch(const std::string& arch) {
  return arch.starts_with(kCubinPrefix) || arch.starts_with(kPtxPrefix);
}

bool is_ptx_arch(const std::string& arch) { return arch.starts_with(kPtxPrefix); }

bool is_amdgpu_arch(const std::string& arch) {
  return arch.starts_with(kGfxPrefix) ||
         std::string_view(arch).substr(0, arch.find(':')) == kAmdgcnSpirvArch;
}

}  // namespace hipacm::backend
