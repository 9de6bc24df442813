// SPDX-License-Identifier: MIT
// spirv_code_object.cpp - decides whether an amdgcnspirv answer is usable: a well-formed SPIR-V
// module, bare or bundled, holding every required name.
#include "hip_backend/codeobject/spirv_code_object.h"

#include <set>

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

bool read_bundled(const std::vector<std::uint8_t>& code, SpirvCodeObject* out, std::string* error) {
  std::vector<OffloadBundleEntry> entries;
  if (!read_offload_bundle(code.data(), code.size(), &entries, error)) return false;
  const OffloadBundleEntry* spirv = nullptr;
  std::string ids;
  for (const OffloadBundleEntry& entry : entries) {
    ids += (ids.empty() ? "" : ", ") + entry.id;
    if (!is_spirv_bundle_id(entry.id)) continue;
    if (spirv != nullptr) return fail_check(error, "offload bundle has two SPIR-V entries");
    spirv = &entry;
  }
  if (spirv == nullptr) {
    return fail_check(error, "offload bundle has no amdgcnspirv entry; entries: " + ids);
  }
  std::string why;
  if (!read_spirv_module(code.data() + spirv->offset, static_cast<std::size_t>(spirv->size),
                         &out->module, &why)) {
    return fail_check(error, "offload bundle entry " + spirv->id + ": " + why);
  }
  out->bundled = true;
  out->bundle_entry = spirv->id;
  return true;
}

}  // namespace

bool is_spirv_arch(const std::string& arch) { return arch == kSpirvArch; }

bool read_spirv_code_object(const std::vector<std::uint8_t>& code, SpirvCodeObject* out,
                            std::string* error) {
  *out = SpirvCodeObject{};
  if (looks_like_offload_bundle(code.data(), code.size())) return read_bundled(code, out, error);
  std::string why;
  if (!read_spirv_module(code.data(), code.size(), &out->module, &why)) {
    return fail_check(error, "code object is not SPIR-V for amdgcnspirv: " + why);
  }
  return true;
}

bool check_spirv_code_object(const std::vector<std::uint8_t>& code,
                             const std::vector<std::string>& expected_kernels, std::string* error) {
  SpirvCodeObject object;
  if (!read_spirv_code_object(code, &object, error)) return false;
  std::set<std::string> present(object.module.kernels.begin(), object.module.kernels.end());
  present.insert(object.module.exported.begin(), object.module.exported.end());
  const std::vector<std::string> missing = missing_names(
      expected_kernels, [&](const std::string& name) { return present.count(name) != 0; });
  if (!missing.empty()) {
    return fail_check(error, "SPIR-V module lacks entry point(s) " + join_names(missing) +
                                 "; kernels present: " + join_names(object.module.kernels));
  }
  return true;
}

}  // namespace hipacm::backend
