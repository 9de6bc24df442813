// SPDX-License-Identifier: MIT
// integrity.cpp - the checks a cached entry must pass before it is served or imported.
#include "plugin/cache/integrity.h"

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/compile_result_check.h"
#include "hip_backend/codeobject/definite_kernels.h"
#include "plugin/cache/lowered_name_match.h"
#include "support/bytes/sha256.h"

namespace hipacm::cache {
namespace {

// Far beyond any mangled name a real template produces (the same bound as
// backend::check_compile_result's).
constexpr std::size_t kMaxLoweredNameBytes = 64 * 1024;

Failure fail(std::string message) {
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(message)};
}

bool is_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Expected<void> arch_and_checksum_hold(const CacheEntry& entry, const std::string& expected_arch) {
  if (!expected_arch.empty() && entry.info.arch != expected_arch)
    return fail("entry is for arch '" + entry.info.arch + "', expected '" + expected_arch + "'");
  if (entry_checksum(entry) != entry.checksum)
    return fail("checksum mismatch (the entry was modified or damaged)");
  return {};
}

}  // namespace

Expected<void> validate_entry(const CacheEntry& entry, const std::string& expected_arch) {
  if (!is_key(entry.info.key)) return fail("the key is not 64 lowercase hex digits");
  for (const std::string* label : {&entry.info.arch, &entry.info.source_name, &entry.info.backend,
                                   &entry.info.compiler_version, &entry.info.plugin_version})
    if (label->size() > kMaxLabelBytes)
      return fail("its arch, source name, backend or a version is over " +
                  std::to_string(kMaxLabelBytes) + " bytes");
  if (Expected<void> held = arch_and_checksum_hold(entry, expected_arch); !held) return held;
  for (const auto& name : entry.lowered_names)
    if (name.empty() || name.size() > kMaxLoweredNameBytes || name.find('\0') != std::string::npos)
      return fail("a lowered name is empty, oversized or holds a NUL byte");
  // Without the request only presence can be checked: every lowered name the
  // entry would hand out is a kernel or data symbol of its object.
  if (const auto checked =
          backend::check_code_object(entry.code, entry.info.arch, entry.lowered_names);
      !checked)
    return fail("code object check failed: " + checked.failure().message);
  return {};
}

std::string failure_checksum(const StoredFailure& failure) {
  Sha256 sha;
  sha.add_field("hipacm-cache-failure-v1");
  sha.add_field(failure.key);
  sha.add_field(failure.arch);
  sha.add_field(failure.backend);
  sha.add_field(failure.compiler_version);
  sha.add_field(failure.error_message);
  sha.add_field(failure.log);
  return sha.hex();
}

Expected<void> validate_failure(const StoredFailure& failure, const std::string& key,
                                const std::string& arch, const std::string& backend,
                                const std::string& compiler_version) {
  if (!is_key(failure.key) || failure.key != key)
    return fail("it is not stored under the key looked up");
  for (const std::string* label : {&failure.arch, &failure.source_name, &failure.backend,
                                   &failure.compiler_version, &failure.plugin_version})
    if (label->size() > kMaxLabelBytes)
      return fail("its arch, source name, backend or a version is over " +
                  std::to_string(kMaxLabelBytes) + " bytes");
  if (failure.error_message.size() > kMaxFailureMessageBytes ||
      failure.log.size() > kMaxFailureLogBytes)
    return fail("its message or log is over the stored bounds");
  if (failure.arch != arch || failure.backend != backend ||
      failure.compiler_version != compiler_version)
    return fail("it was stored for another arch or compiler");
  if (failure_checksum(failure) != failure.checksum)
    return fail("checksum mismatch (the row was modified or damaged)");
  return {};
}

Expected<void> validate_entry_for_request(const CacheEntry& entry,
                                          const backend::CompileRequest& request,
                                          bool reads_disk_headers, bool code_checked) {
  if (Expected<void> held = arch_and_checksum_hold(entry, request.arch); !held) return held;
  if (!code_checked) {
    if (const auto answers =
            backend::check_compile_result(request, entry.code, entry.lowered_names);
        !answers)
      return fail("it does not answer the request: " + answers.failure().message);
  }
  // A header on disk could rename a kernel by macro; without one the scan's
  // names are in every valid compile of this request.
  if (!reads_disk_headers) {
    const std::vector<std::string> kernels = backend::definite_extern_c_kernels(request);
    if (const auto has_kernels =
            kernels.empty() ? Expected<void>()
                            : backend::check_code_object(entry.code, request.arch, kernels);
        !has_kernels)
      return fail("it lacks a kernel the source defines: " + has_kernels.failure().message);
  }
  if (Expected<void> matched = lowered_names_match(request.name_expressions, entry.lowered_names);
      !matched)
    return fail(std::move(matched).failure().message);
  return {};
}

}  // namespace hipacm::cache
