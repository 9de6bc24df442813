// SPDX-License-Identifier: MIT
// arch_validation.h - whether an arch can be compiled here: checked against NVRTC or comgr and
// hipRTC.
#pragma once

#include <hipacm/hipacm.h>

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

class LibraryFactMemo;

/// Routes by prefix: NVIDIA archs to validate_nvidia_arch (nvrtc_compiler.h),
/// everything else to comgr's target list together with what hipRTC's identity
/// says of its release (validate_amdgpu_arch; see docs/ARCHS.md), and then
/// requires hipRTC for them. A failure: INVALID_ARGUMENT for a refused arch,
/// BACKEND_UNAVAILABLE when comgr or hipRTC is missing. `memo` lets both facts
/// come from an earlier process instead of loading the libraries
/// (library_facts.h).
Expected<void> validate_arch(const std::string& arch, LibraryFactMemo* memo = nullptr);

}  // namespace hipacm::backend
