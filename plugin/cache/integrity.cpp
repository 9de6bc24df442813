// integrity.cpp - the checks a cached entry must pass before it is served or imported.
#include "plugin/cache/integrity.h"

#include "hip_backend/code_object_check.h"
#include "hip_backend/elf_reader.h"
#include "hip_backend/target_arch.h"
#include "plugin/cache/sha256.h"

namespace hipacm::cache {

std::string entry_checksum(const CacheEntry& entry) {
  Sha256 sha;
  sha.add_field("hipacm-cache-entry-v1");
  sha.add_field(entry.info.key);
  sha.add_field(entry.info.arch);
  sha.add_count(entry.lowered_names.size());
  for (const auto& name : entry.lowered_names) sha.add_field(name);
  sha.add_count(entry.expected_kernels.size());
  for (const auto& name : entry.expected_kernels) sha.add_field(name);
  sha.add_field(entry.log);
  sha.add_count(entry.code.size());
  sha.add_bytes(entry.code.data(), entry.code.size());
  return sha.hex();
}

bool validate_cached_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                                 const std::vector<std::string>& expected_kernels,
                                 std::string* error) {
  if (arch.rfind("gfx", 0) == 0 || backend::is_nvidia_arch(arch))
    return backend::check_code_object(code, arch, expected_kernels, error);
  *error = "no code-object check is available for arch '" + arch + "'";
  return false;
}

bool validate_entry(const CacheEntry& entry, const std::string& expected_arch, std::string* error) {
  if (!expected_arch.empty() && entry.info.arch != expected_arch) {
    *error = "entry is for arch '" + entry.info.arch + "', expected '" + expected_arch + "'";
    return false;
  }
  if (entry_checksum(entry) != entry.checksum) {
    *error = "checksum mismatch (the entry was modified or damaged)";
    return false;
  }
  std::string why;
  if (!validate_cached_code_object(entry.code, entry.info.arch, entry.expected_kernels, &why)) {
    *error = "code object check failed: " + why;
    return false;
  }
  return true;
}

std::vector<std::string> expected_kernel_names(const std::string& source,
                                               const std::vector<std::string>& lowered_names,
                                               const std::vector<std::uint8_t>& code) {
  std::vector<std::string> expected = backend::extern_c_kernel_names(source);
  backend::CodeObjectInfo info;
  std::string ignored;
  const bool readable = backend::read_code_object(code.data(), code.size(), &info, &ignored);
  for (const std::string& name : lowered_names) {
    bool is_data = false;
    for (const backend::ElfSymbol& symbol : info.symbols)
      if (readable && symbol.name == name && symbol.type == 1 /* STT_OBJECT */) is_data = true;
    if (!is_data) expected.push_back(name);
  }
  return expected;
}

}  // namespace hipacm::cache
