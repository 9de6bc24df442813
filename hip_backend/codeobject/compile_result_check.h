// SPDX-License-Identifier: MIT
// compile_result_check.h - the one acceptance test for a code object claimed to answer a request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "support/failure.h"

namespace hipacm::backend {

/// Whether `code` with `lowered_names` is an acceptable answer to `request`,
/// whoever produced it (hipRTC or NVRTC in this process, a worker process, or
/// a cache entry). Everything required is derived from the request, never
/// from the answer: the code object is readable and targets request.arch; it
/// holds exactly one lowered name per request.name_expressions entry; and each
/// lowered name is a kernel (a descriptor / entry) or a data symbol in it.
/// Kernels that a source scan finds are not required: a valid program may
/// compile them out (#if, macros). Otherwise the failure (HIPACM_ERROR_COMPILATION) says what is
/// wrong.
Expected<void> check_compile_result(const CompileRequest& request,
                                    const std::vector<std::uint8_t>& code,
                                    const std::vector<std::string>& lowered_names);

}  // namespace hipacm::backend
