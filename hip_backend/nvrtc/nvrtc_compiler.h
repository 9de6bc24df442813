// SPDX-License-Identifier: MIT
// nvrtc_compiler.h - one HIP source compiled for an NVIDIA arch with NVRTC, checked before success.
#pragma once

#include <hipacm/hipacm.h>

#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/library_facts.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "support/failure.h"

namespace hipacm::backend {

/// Compiles with NVRTC for request.arch (sm_XX: CUBIN, compute_XX: PTX with
/// its terminating NUL). The HIP prelude is pre-included as hip/hip_runtime.h.
/// NVRTC is thread-safe: no process-wide lock is taken. Never throws.
CompileResult compile_with_nvrtc(const CompileRequest& request);

/// The same against an explicit table; null `api` means NVRTC could not be
/// loaded, for the reason `load_error`.
CompileResult compile_with_nvrtc_api(const NvrtcApi* api, const std::string& load_error,
                                     const CompileRequest& request);

/// Checks an NVIDIA arch against NVRTC's nvrtcGetSupportedArchs, as `memo` remembers it for the
/// NVRTC that dlopen would load (nvrtc_facts.h), else as NVRTC says. Success, or a failure:
/// INVALID_ARGUMENT (the message lists the supported archs) or BACKEND_UNAVAILABLE (NVRTC
/// cannot be loaded).
Expected<void> validate_nvidia_arch(const std::string& arch, LibraryFactMemo* memo = nullptr);

/// hipRTC-style options turned into NVRTC ones (docs/NVIDIA.md has the
/// table): sets --gpu-architecture from `arch`, drops -O levels and AMD-only
/// code-generation flags, translates -ffast-math and friends. A failure
/// (INVALID_ARGUMENT) when an option names a different or an AMD arch.
Expected<std::vector<std::string>> translate_options_for_nvrtc(
    const std::vector<std::string>& options, const std::string& arch);

}  // namespace hipacm::backend
