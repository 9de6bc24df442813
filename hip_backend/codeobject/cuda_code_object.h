// SPDX-License-Identifier: MIT
// cuda_code_object.h - the check of an NVIDIA code object (CUBIN or PTX) and its PTX entry names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

/// A CUBIN counts as compiled if it is an ELF with e_machine == EM_CUDA and
/// has a FUNC symbol marked STO_CUDA_ENTRY (or a data symbol, for a lowered
/// "&var") for every expected kernel; PTX text (arch compute_XX) if it has an
/// `.entry <name>` (or a .global/.const declaration) for each.
/// Otherwise the failure (HIPACM_ERROR_COMPILATION) says what is missing.
Expected<void> check_cuda_code_object(const std::vector<std::uint8_t>& code,
                                      const std::string& arch,
                                      const std::vector<std::string>& expected_kernels);

/// The names after every `.entry` directive in PTX text, sorted and unique.
std::vector<std::string> ptx_entry_names(const std::vector<std::uint8_t>& ptx);

}  // namespace hipacm::backend
