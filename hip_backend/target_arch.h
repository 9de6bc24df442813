// target_arch.h - which platform an arch names (gfx* AMD, sm_/compute_ NVIDIA), and its validation.
#pragma once

#include <hipacm/hipacm.h>

#include <string>

namespace hipacm::backend {

/// True for "sm_XX[a]" and "compute_XX[a]": NVIDIA targets compiled with NVRTC.
bool is_nvidia_arch(const std::string& arch);

/// True for "compute_XX[a]": a virtual arch, compiled to PTX instead of CUBIN.
bool is_ptx_arch(const std::string& arch);

/// Checks an NVIDIA arch against NVRTC's nvrtcGetSupportedArchs. Returns
/// HIPACM_SUCCESS, INVALID_ARGUMENT (the message lists the supported archs)
/// or BACKEND_UNAVAILABLE (NVRTC cannot be loaded), with *error set.
hipacm_status validate_nvidia_arch(const std::string& arch, std::string* error);

class LibraryFactMemo;

/// Routes by prefix: NVIDIA archs to validate_nvidia_arch, everything else
/// to comgr's target list, and then requires hipRTC for them
/// (BACKEND_UNAVAILABLE when comgr or hipRTC is missing). `memo` lets both
/// facts come from an earlier process instead of loading the libraries
/// (library_facts.h).
hipacm_status validate_arch(const std::string& arch, std::string* error,
                            LibraryFactMemo* memo = nullptr);

}  // namespace hipacm::backend
