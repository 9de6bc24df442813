// SPDX-License-Identifier: MIT
// spirv_code_object.h - the check of an "amdgcnspirv" answer: a SPIR-V module, bare or in the one
// SPIR-V entry of an offload bundle, and the kernels it confirms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/codeobject/spirv_module.h"
#include "support/failure.h"

namespace hipacm::backend {

/// The arch that asks for AMD-flavoured SPIR-V, which the HIP runtime finalizes for the device
/// at load.
inline constexpr const char* kSpirvArch = "amdgcnspirv";

/// True for "amdgcnspirv" (it takes no target features).
bool is_spirv_arch(const std::string& arch);

/// A SPIR-V answer as read: the module and, when it came in an offload bundle, the entry's id.
struct SpirvCodeObject {
  SpirvModule module;
  bool bundled = false;
  std::string bundle_entry;  ///< "hip-spirv64-amd-amdhsa--amdgcnspirv" or its "-unknown-" form
};

/// Reads `code` as a bare SPIR-V module, or as an uncompressed offload bundle with exactly one
/// SPIR-V entry for amdgcnspirv (other entries, such as an empty host one, are allowed); a
/// failure (HIPACM_ERROR_COMPILATION) otherwise.
Expected<SpirvCodeObject> read_spirv_code_object(const std::vector<std::uint8_t>& code);

/// An amdgcnspirv answer counts as compiled if read_spirv_code_object accepts it and every name
/// in `expected_kernels` is a Kernel entry point or an exported name in the module.
Expected<void> check_spirv_code_object(const std::vector<std::uint8_t>& code,
                                       const std::vector<std::string>& expected_kernels);

}  // namespace hipacm::backend
