// SPDX-License-Identifier: MIT
// code_object_check.cpp - decides whether a compiled code object is usable: AMDGPU HSA of an
// accepted code-object version, the requested processor and features, all kernels.
#include "hip_backend/codeobject/code_object_check.h"

#include "hip_backend/codeobject/amdgpu_target.h"
#include "hip_backend/codeobject/cuda_code_object.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/spirv_code_object.h"
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
  AmdgpuTarget target;
  if (!decode_amdgpu_target(info, &target, error)) return false;
  if (target.processor.empty()) {
    return fail_check(error, "code object is for processor 'unknown (e_flags " +
                                 std::to_string(info.flags) + ")', expected '" +
                                 arch.substr(0, arch.find(':')) + "'");
  }
  if (!target_answers_arch(target, arch, error)) return false;
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
  if (is_spirv_arch(arch)) return check_spirv_code_object(code, expected_kernels, error);
  return check_amdgpu_code_object(code, arch, expected_kernels, error);
}

std::vector<std::string> code_object_kernels(const std::vector<std::uint8_t>& code,
                                             const std::string& arch) {
  if (is_ptx_arch(arch)) return ptx_entry_names(code);
  if (is_spirv_arch(arch)) {
    SpirvCodeObject spirv;
    return read_spirv_code_object(code, &spirv, nullptr) ? spirv.module.kernels
                                                         : std::vector<std::string>{};
  }
  CodeObjectInfo info;
  std::string ignored;
  if (!read_code_object(code.data(), code.size(), &info, &ignored)) return {};
  return is_nvidia_arch(arch) ? info.cuda_kernels : info.amdgpu_kernels;
}

}  // namespace hipacm::backend
