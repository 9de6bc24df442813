// code_object_check.cpp - decides whether a compiled code object is usable: AMDGPU, right
// processor, all kernels.
#include "hip_backend/codeobject/code_object_check.h"

#include "hip_backend/codeobject/cuda_code_object.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/symbol_check.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

bool check_amdgpu_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                              const std::vector<std::string>& expected_kernels,
                              std::string* error) {
  CodeObjectInfo info;
  if (!read_object_for_machine(code, kElfMachineAmdgpu, "EM_AMDGPU (224)", &info, error)) {
    return false;
  }
  const std::string wanted = arch.substr(0, arch.find(':'));
  const std::string found = amdgpu_processor_from_flags(info.flags);
  if (found != wanted) {
    return fail_check(
        error,
        "code object is for processor '" +
            (found.empty() ? "unknown (e_flags " + std::to_string(info.flags) + ")" : found) +
            "', expected '" + wanted + "'");
  }
  const std::vector<std::string> missing =
      missing_symbols(info, info.amdgpu_kernels, expected_kernels);
  if (!missing.empty()) {
    std::vector<std::string> descriptors;
    for (const std::string& name : missing) descriptors.push_back(name + ".kd");
    return fail_check(error, "code object lacks kernel descriptor(s) " + join_names(descriptors) +
                                 "; kernels present: " + join_names(info.amdgpu_kernels));
  }
  return true;
}

bool check_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                       const std::vector<std::string>& expected_kernels, std::string* error) {
  if (is_nvidia_arch(arch)) return check_cuda_code_object(code, arch, expected_kernels, error);
  return check_amdgpu_code_object(code, arch, expected_kernels, error);
}

std::vector<std::string> code_object_kernels(const std::vector<std::uint8_t>& code,
                                             const std::string& arch) {
  if (is_ptx_arch(arch)) return ptx_entry_names(code);
  CodeObjectInfo info;
  std::string ignored;
  if (!read_code_object(code.data(), code.size(), &info, &ignored)) return {};
  return is_nvidia_arch(arch) ? info.cuda_kernels : info.amdgpu_kernels;
}

}  // namespace hipacm::backend
