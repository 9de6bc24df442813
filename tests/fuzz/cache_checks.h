// SPDX-License-Identifier: MIT
// cache_checks.h - what the cache fuzz targets do with a database file once it exists.
#pragma once

#include <string>

namespace hipacm::fuzz {

/// Uses `file` the ways hipacm reads an untrusted cache database: as an
/// import into a fresh cache at `import_target`, as a read-only (system)
/// cache, and, through a copy at `writable_copy`, as a damaged user cache.
/// Failures must be std::exceptions with a message; an imported entry must
/// pass the same checks as a fresh compile, with its size recomputed.
void exercise_cache_file(const std::string& file, const std::string& import_target,
                         const std::string& writable_copy);

}  // namespace hipacm::fuzz
