// SPDX-License-Identifier: MIT
// spirv_code_object.cpp - decides whether an amdgcnspirv answer is usable: a well-formed SPIR-V
// module, bare or bundled, holding every required name.
#include "hip_backend/codeobject/spirv_code_object.h"

#include <set>
#include <utility>

#include "hip_backend/codeobject/offload_bundle.h"
#include "hip_backend/codeobject/symbol_check.h"

namespace hipacm::backend {

namespace {

// The ids clang and the HIP runtime use for the SPIR-V entry of a HIP bundle.
constexpr const char* kSpirvBundleIds[] = {"hip-spirv64-amd-amdhsa--amdgcnspirv",
                                           "hip-spirv64-amd-amdhsa-unknown-amdgcnspirv"};

bool is_spirv_bundle_id(const std::string& id) {
  for (const char* known : kSpirvBundleIds) {
    if (id == known) return true;
  }
  return false;
}

Expected<SpirvCodeObject> read_bundled(const std::vector<std::uint8_t>& code) {
  Expected<std::vector<OffloadBundleEntry>> entries = read_offload_bundle(code.data(), code.size());
  if (!entries) return std::move(entries).failure();
  const OffloadBundleEntry* spirv = nullptr;
  std::string ids;
  for (const OffloadBundleEntry& entry : entries.value()) {
    ids += (ids.empty() ? "" : ", ") + entry.id;
    if (!is_spirv_bundle_id(entry.id)) continue;
    if (spirv != nullptr) return check_failure("offload bundle has two SPIR-V entries");
    spirv = &entry;
  }
  if (spirv == nullptr) {
    return check_failure("offload bundle has no amdgcnspirv entry; entries: " + ids);
  }
  Expected<SpirvModule> module =
      read_spirv_module(code.data() + spirv->offset, static_cast<std::size_t>(spirv->size));
  if (!module) {
    return check_failure("offload bundle entry " + spirv->id + ": " + module.failure().message);
  }
  SpirvCodeObject object;
  object.module = std::move(module).value();
  object.bundled = true;
  object.bundle_entry = spirv->id;
  return object;
}

}  // namespace

bool is_spirv_arch(const std::string& arch) { return arch == kSpirvArch; }

Expected<SpirvCodeObject> read_spirv_code_object(const std::vector<std::uint8_t>& code) {
  if (looks_like_offload_bundle(code.data(), code.size())) return read_bundled(code);
  Expected<SpirvModule> module = read_spirv_module(code.data(), code.size());
  if (!module) {
    return check_failure("code object is not SPIR-V for amdgcnspirv: " + module.failure().message);
  }
  SpirvCodeObject object;
  object.module = std::move(module).value();
  return object;
}

Expected<void> check_spirv_code_object(const std::vector<std::uint8_t>& code,
                                       const std::vector<std::string>& expected_kernels) {
  Expected<SpirvCodeObject> read = read_spirv_code_object(code);
  if (!read) return std::move(read).failure();
  const SpirvCodeObject& object = read.value();
  std::set<std::string> present(object.module.kernels.begin(), object.module.kernels.end());
  present.insert(object.module.exported.begin(), object.module.exported.end());
  const std::vector<std::string> missing = missing_names(
      expected_kernels, [&](const std::string& name) { return present.count(name) != 0; });
  if (!missing.empty()) {
    return check_failure("SPIR-V module lacks entry point(s) " + join_names(missing) +
                         "; kernels present: " + join_names(object.module.kernels));
  }
  return {};
}

}  // namespace hipacm::backend
