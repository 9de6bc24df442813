// SPDX-License-Identifier: MIT
// target_arch.h - which platform an arch names: gfx* and amdgcnspirv AMD, sm_/compute_ NVIDIA.
#pragma once

#include <string>
#include <string_view>

namespace hipacm::backend {

/// The portable AMD target: SPIR-V that the HIP runtime finishes for the GPU it loads on.
inline constexpr std::string_view kAmdgcnSpirvArch = "amdgcnspirv";

/// True for "sm_XX[a]" and "compute_XX[a]": NVIDIA targets compiled with NVRTC.
bool is_nvidia_arch(const std::string& arch);

/// True for "compute_XX[a]": a virtual arch, compiled to PTX instead of CUBIN.
bool is_ptx_arch(const std::string& arch);

/// True for "gfx..." (a processor or generic target, with any features) and for amdgcnspirv
/// (with anything after a ':', which validation then refuses): the targets hipRTC serves.
bool is_amdgpu_arch(const std::string& arch);

}  // namespace hipacm::backend
