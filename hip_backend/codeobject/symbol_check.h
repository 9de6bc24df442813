// SPDX-License-Identifier: MIT
// symbol_check.h - what the AMDGPU and NVIDIA code-object checks share: reading an object for one
// machine, finding the required names it lacks, and listing names in a message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hip_backend/codeobject/elf_reader.h"
#include "support/failure.h"

namespace hipacm::backend {

/// A refused code object: HIPACM_ERROR_COMPILATION, the status every caller gives an answer
/// that fails the check, with `message`.
Failure check_failure(std::string message);

/// Reads `code` and requires e_machine `machine`; otherwise the failure says why ("code object is
/// unreadable: ...", "code object has e_machine N, expected <expected>").
Expected<CodeObjectInfo> read_object_for_machine(const std::vector<std::uint8_t>& code,
                                                 std::uint16_t machine,
                                                 const std::string& expected);

/// The names in `expected` for which `present` is false, each once, in `expected` order.
std::vector<std::string> missing_names(const std::vector<std::string>& expected,
                                       const std::function<bool(const std::string&)>& present);

/// missing_names() of an ELF object: a name is present as one of `kernels` or as a data symbol
/// (STT_OBJECT), which is what a name expression "&var" lowers to: a device variable with no
/// kernel, and just as required.
std::vector<std::string> missing_symbols(const CodeObjectInfo& info,
                                         const std::vector<std::string>& kernels,
                                         const std::vector<std::string>& expected);

/// Up to eight names, comma-separated, then ", ... (N more)"; "none" when there are none.
std::string join_names(const std::vector<std::string>& names);

}  // namespace hipacm::backend
