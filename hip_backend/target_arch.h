// target_arch.h - which platform an arch names: gfx* AMD, sm_/compute_ NVIDIA.
#pragma once

#include <string>

namespace hipacm::backend {

/// True for "sm_XX[a]" and "compute_XX[a]": NVIDIA targets compiled with NVRTC.
bool is_nvidia_arch(const std::string& arch);

/// True for "compute_XX[a]": a virtual arch, compiled to PTX instead of CUBIN.
bool is_ptx_arch(const std::string& arch);

}  // namespace hipacm::backend
