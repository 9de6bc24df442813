// code_object_check.h - the success criterion for a compiled code object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hipacm::backend {

/// Kernel names that the source declares as `extern "C" __global__` (a
/// lexical scan that skips comments and string literals; best effort).
std::vector<std::string> extern_c_kernel_names(const std::string& source);

/// A code object counts as compiled only if it is an ELF with
/// e_machine == EM_AMDGPU, its processor matches `arch` (the part before any
/// ':'), and it has a "<name>.kd" descriptor for every name in
/// `expected_kernels` (extern "C" kernels plus lowered names).
/// Returns true or false with *error saying what is missing.
bool check_amdgpu_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                              const std::vector<std::string>& expected_kernels,
                              std::string* error);

}  // namespace hipacm::backend
