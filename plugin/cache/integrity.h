// integrity.h - the checks a cached entry must pass before it is served or imported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugin/cache/entry.h"

namespace hipacm::cache {

/// SHA-256 over everything an entry serves (key, arch, lowered and expected
/// names, log, code object), length-prefixed.
std::string entry_checksum(const CacheEntry& entry);

/// The code-object check for `arch`, the one place that knows which
/// backend's check applies: AMDGPU ELF for gfx* archs. Other archs fail
/// until their backend provides a check.
bool validate_cached_code_object(const std::vector<std::uint8_t>& code, const std::string& arch,
                                 const std::vector<std::string>& expected_kernels,
                                 std::string* error);

/// Checksum, code-object check, and (when `expected_arch` is not empty) the
/// arch. False with *error saying what failed.
bool validate_entry(const CacheEntry& entry, const std::string& expected_arch, std::string* error);

/// The kernels a code object compiled from `source` must define: its
/// extern "C" kernels plus the lowered names that are not data symbols
/// ("&var" name expressions lower to variables, which have no descriptor).
std::vector<std::string> expected_kernel_names(const std::string& source,
                                               const std::vector<std::string>& lowered_names,
                                               const std::vector<std::uint8_t>& code);

}  // namespace hipacm::cache
