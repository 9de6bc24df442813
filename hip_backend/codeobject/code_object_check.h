// SPDX-License-Identifier: MIT
// code_object_check.h - the success criterion for a compiled code object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

/// A code object counts as compiled only if it is an ELF with e_machine == EM_AMDGPU and
/// EI_OSABI ELFOSABI_AMDGPU_HSA, of a code-object version hipacm reads (amdgpu_target.h), its
/// processor is the one `arch` names, the xnack/sramecc settings of `arch` ("gfx90a:xnack+")
/// are the object's, and every name in `expected_kernels` is a kernel (a "<name>.kd"
/// descriptor) or a data symbol (a lowered "&var" name expression).
/// Otherwise the failure (HIPACM_ERROR_COMPILATION) says what is missing.
Expected<void> check_amdgpu_code_object(const std::vector<std::uint8_t>& code,
                                        const std::string& arch,
                                        const std::vector<std::string>& expected_kernels);

/// The one success criterion: the AMDGPU, the SPIR-V (check_spirv_code_object in
/// spirv_code_object.h) or the CUDA check (check_cuda_code_object in cuda_code_object.h),
/// chosen by arch.
Expected<void> check_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                                 const std::vector<std::string>& expected_kernels);

/// Every kernel in a code object for `arch`, sorted by name: AMDGPU kernels
/// with descriptors, SPIR-V Kernel entry points, CUBIN entry functions, or PTX `.entry` names.
/// Empty when the code object cannot be read.
std::vector<std::string> code_object_kernels(const std::vector<std::uint8_t>& code,
                                             const std::string& arch);

}  // namespace hipacm::backend
