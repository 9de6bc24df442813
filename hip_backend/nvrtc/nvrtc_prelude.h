// SPDX-License-Identifier: MIT
// nvrtc_prelude.h - the device-side HIP prelude that NVRTC compiles pre-include as
// hip/hip_runtime.h.
#pragma once

namespace hipacm::backend {

/// The virtual header's name; NVRTC pre-includes it into every HIP source.
inline constexpr const char* kHipPreludeName = "hip/hip_runtime.h";

/// What HIP's NVIDIA platform provides on the device side and CUDA lacks
/// under HIP's names: hipThreadIdx_x and friends, mask-less shuffles and
/// votes, HIP_DYNAMIC_SHARED, the platform macros. docs/NVIDIA.md lists it.
const char* hip_prelude_source();

}  // namespace hipacm::backend
