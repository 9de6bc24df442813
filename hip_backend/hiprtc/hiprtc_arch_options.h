// SPDX-License-Identifier: MIT
// hiprtc_arch_options.h - backend-private: every arch in a request checked, and the option that
// tells hipRTC which target to compile for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "support/failure.h"

namespace hipacm::backend {

/// Whether an arch may reach hipRTC: success, or the failure saying why.
using ArchValidator = std::function<Expected<void>(const std::string& arch)>;

/// The arch option hipRTC needs for `request`, after every arch in it passed `validate`: the
/// request's own and any the caller put in "--gpu-architecture=" or "--offload-arch=" options,
/// which must name the same target (processor and features, in any order). hipRTC aborts the
/// process on an unknown arch, so none may slip through. Returns {"--gpu-architecture=<arch>"}, or
/// {} when the options already name it; for amdgcnspirv {"--offload-arch=amdgcnspirv"}, and name
/// expressions and -fgpu-rdc are refused (hipRTC lowers no names in SPIR-V and emits none for
/// separate device code). Throws (fail_compile) INVALID_ARGUMENT.
std::vector<std::string> hiprtc_arch_options(const CompileRequest& request,
                                             const ArchValidator& validate);

}  // namespace hipacm::backend
