// SPDX-License-Identifier: MIT
// fuzz_cache_entry.cpp - fuzz target: one hostile row of a cache database, served, verified,
// imported.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "plugin/cache/store/sqlite_db.h"
#include "tests/fuzz/cache_checks.h"
#include "tests/fuzz/cache_row.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/scratch_dir.h"

// The input is one row's columns (cache_row.h); a database holding that row
// is then used every way hipacm reads a cache.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const hipacm::fuzz::ScratchDir scratch;
  scratch.empty();
  hipacm::fuzz::FuzzInput in(data, size);
  const hipacm::fuzz::CacheRow row = hipacm::fuzz::read_cache_row(in);
  const std::string file = (scratch.path() / "rows.sqlite3").string();
  try {
    hipacm::fuzz::write_database_with_row(file, row);
  } catch (const hipacm::cache::SqliteError&) {
    return 0;  // the schema refuses the row (a duplicate or NULL never comes from bytes here)
  }
  hipacm::fuzz::exercise_cache_file(file, (scratch.path() / "cache" / "kernels.sqlite3").string(),
                                    (scratch.path() / "user.sqlite3").string());
  return 0;
}
