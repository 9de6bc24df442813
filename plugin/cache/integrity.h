// SPDX-License-Identifier: MIT
// integrity.h - the checks a cached entry must pass before it is served or imported.
#pragma once

#include <string>

#include "hip_backend/compiler.h"
#include "plugin/cache/store/entry.h"
#include "plugin/cache/store/stored_failure.h"
#include "support/failure.h"

namespace hipacm::cache {

// entry_checksum(), the SHA-256 these checks compare an entry's checksum with, is declared in
// plugin/cache/store/entry.h, where the remote tier can reach it too.

/// What can be checked without the request (import, verify): a well-formed
/// key, the arch (when `expected_arch` is not empty), the checksum, sane
/// lowered names, and a code object readable for the entry's arch that
/// holds every lowered name. An INVALID_ARGUMENT failure says what failed.
Expected<void> validate_entry(const CacheEntry& entry, const std::string& expected_arch);

/// The serve-time check: the entry is for request.arch, its checksum holds,
/// and it answers `request` by what the request itself requires
/// (backend::check_compile_result: a readable object, one lowered name per
/// name expression, each present) with lowered names that match their name
/// expressions (lowered_name_match.h). For a request that reads no header
/// from disk, the object must also hold every kernel its source defines
/// unconditionally (backend::definite_extern_c_kernels), so an entry cannot
/// answer a request with some other program. Nothing the entry says about
/// itself is trusted. An INVALID_ARGUMENT failure says what failed. With `code_checked` (an
/// entry made from a result whose CompileResult::code_checked is set: this process checked those
/// very bytes against this request), check_compile_result is not run again.
Expected<void> validate_entry_for_request(const CacheEntry& entry,
                                          const backend::CompileRequest& request,
                                          bool reads_disk_headers, bool code_checked = false);

/// SHA-256 over what a stored failure serves and is matched by (key, arch,
/// backend, compiler version, error message, log), length-prefixed.
std::string failure_checksum(const StoredFailure& failure);

/// The serve-time check of a stored failure: it is stored under `key` (a
/// well-formed one), for `arch`, by the compiler `backend` at
/// `compiler_version` (which the key already names: a forged row must not
/// borrow a key), with labels, message and log within their bounds and its
/// checksum holding. An INVALID_ARGUMENT failure says what failed.
Expected<void> validate_failure(const StoredFailure& failure, const std::string& key,
                                const std::string& arch, const std::string& backend,
                                const std::string& compiler_version);

}  // namespace hipacm::cache
