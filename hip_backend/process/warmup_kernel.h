// SPDX-License-Identifier: MIT
// warmup_kernel.h - the trivial compile that loads and initializes a compiler before real work.
#pragma once

#include <string>

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// A one-line kernel for `arch` that hipRTC and NVRTC both accept (no includes): compiling it
/// pays a compiler's first-use cost (loading the library, its builtins, its target) so that the
/// first real compile does not.
CompileRequest warmup_request(const std::string& arch);

}  // namespace hipacm::backend
