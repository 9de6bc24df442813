// SPDX-License-Identifier: MIT
// inprocess_compiler.h - one hipRTC compile in this process, serialized by the process-wide lock.
#pragma once

#include <string>
#include <vector>

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// Compiles for an AMD arch with the dlopen'd hipRTC. hipRTC 5.2.3 is not
/// thread-safe (overlapping compiles abort the process, and first use
/// races), so every compile takes one process-wide lock after a once-only
/// initialization. Checks the code object before reporting success. Never
/// throws.
CompileResult compile_with_hiprtc(const CompileRequest& request);

/// The options hipRTC compiles `request` with: its arch option, then the caller's, after every
/// check compile_with_hiprtc makes before it calls hipRTC. Throws (fail_compile) what that
/// compile would report for a request that fails one.
std::vector<std::string> hiprtc_compile_options(const CompileRequest& request);

}  // namespace hipacm::backend
