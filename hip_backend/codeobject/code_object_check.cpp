// SPDX-License-Identifier: MIT
// code_object_check.cpp - decides whether a compiled code object is usable: AMDGPU HSA of an
// accepted code-object version, the requested processor and features, all kernels.
#include "hip_backend/codeobject/code_object_check.h"

#include <utility>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "hip_backend/codeobject/cuda_code_object.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/spirv_code_object.h"
#include "hip_backend/codeobject/symbol_check.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

Expected<void> check_amdgpu_code_object(const std::vector<std::uint8_t>& code,
                                        const std::string& arch,
                                        const std::vector<std::string>& expected_kernels) {
  Expected<CodeObjectInfo> read =
      read_object_for_machine(code, kElfMachineAmdgpu, "EM_AMDGPU (224)");
  if (!read) return std::move(read).failure();
  const CodeObjectInfo& info = read.value();
  Expected<AmdgpuTarget> target = decode_amdgpu_target(info);
  if (!target) return std::move(target).failure();
  if (target->processor.empty()) {
    return check_failure("code object is for processor 'unknown (e_flags " +
                         std::to_string(info.flags) + ")', expected '" +
                         arch.substr(0, arch.find(':')) + "'");
  }
  if (Expected<void> answers = target_answers_arch(target.value(), arch); !answers) return answers;
  const std::vector<std::string> missing =
      missing_symbols(info, info.amdgpu_kernels, expected_kernels);
  if (!missing.empty()) {
    std::vector<std::string> descriptors;
    for (const std::string& name : missing) descriptors.push_back(name + ".kd");
    return check_failure("code object lacks kernel descriptor(s) " + join_names(descriptors) +
                         "; kernels present: " + join_names(info.amdgpu_kernels));
  }
  return {};
}

Expected<void> check_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                                 const std::vector<std::string>& expected_kernels) {
  if (is_nvidia_arch(arch)) return check_cuda_code_object(code, arch, expected_kernels);
  if (is_spirv_arch(arch)) return check_spirv_code_object(code, expected_kernels);
  return check_amdgpu_code_object(code, arch, expected_kernels);
}

std::vector<std::string> code_object_kernels(const std::vector<std::uint8_t>& code,
                                             const std::string& arch) {
  if (is_ptx_arch(arch)) return ptx_entry_names(code);
  if (is_spirv_arch(arch)) {
    Expected<SpirvCodeObject> spirv = read_spirv_code_object(code);
    return spirv ? std::move(spirv->module.kernels) : std::vector<std::string>{};
  }
  Expected<CodeObjectInfo> info = read_code_object(code.data(), code.size());
  if (!info) return {};
  return is_nvidia_arch(arch) ? std::move(info->cuda_kernels) : std::move(info->amdgpu_kernels);
}

}  // namespace hipacm::backend
