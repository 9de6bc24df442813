// code_object_check.cpp - decides whether a compiled code object is usable: AMDGPU, right
// processor, all kernels.
#include "hip_backend/codeobject/code_object_check.h"

#include <algorithm>
#include <set>

#include "hip_backend/codeobject/cuda_code_object.h"
#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

std::string join(const std::vector<std::string>& items, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < limit; ++i) {
    out += (i == 0 ? "" : ", ") + items[i];
  }
  if (items.size() > limit) out += ", ... (" + std::to_string(items.size() - limit) + " more)";
  return out;
}

bool fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

}  // namespace

bool check_amdgpu_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                              const std::vector<std::string>& expected_kernels,
                              std::string* error) {
  CodeObjectInfo info;
  std::string elf_error;
  if (!read_code_object(code.data(), code.size(), &info, &elf_error)) {
    return fail(error, "code object is unreadable: " + elf_error);
  }
  if (info.machine != kElfMachineAmdgpu) {
    return fail(error, "code object has e_machine " + std::to_string(info.machine) +
                           ", expected EM_AMDGPU (224)");
  }
  const std::string wanted = arch.substr(0, arch.find(':'));
  const std::string found = amdgpu_processor_from_flags(info.flags);
  if (found != wanted) {
    return fail(error, "code object is for processor '" +
                           (found.empty() ? "unknown (e_flags " + std::to_string(info.flags) + ")"
                                          : found) +
                           "', expected '" + wanted + "'");
  }
  const std::set<std::string> present(info.amdgpu_kernels.begin(), info.amdgpu_kernels.end());
  // A name expression "&var" lowers to a device variable: a data symbol with
  // no kernel descriptor, and just as required.
  std::set<std::string> data;
  for (const ElfSymbol& symbol : info.symbols) {
    if (symbol.type == 1 /* STT_OBJECT */) data.insert(symbol.name);
  }
  std::vector<std::string> missing;
  std::set<std::string> reported;
  for (const std::string& name : expected_kernels) {
    if (present.count(name) != 0 || data.count(name) != 0) continue;
    if (reported.insert(name).second) missing.push_back(name);
  }
  if (!missing.empty()) {
    std::vector<std::string> descriptors;
    for (const std::string& name : missing) descriptors.push_back(name + ".kd");
    return fail(error, "code object lacks kernel descriptor(s) " + join(descriptors, 8) +
                           "; kernels present: " +
                           (info.amdgpu_kernels.empty() ? "none" : join(info.amdgpu_kernels, 8)));
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
