// SPDX-License-Identifier: MIT
// cache_row.h - one row of the cache's entries table, as raw column values a file may hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_input.h"

namespace hipacm::fuzz {

/// Every column of `entries`, unchecked. A row read from a file may hold any
/// of these values, and the integer columns may hold text.
struct CacheRow {
  std::string key, arch, source_name, backend, compiler_version, plugin_version;
  std::string lowered_names, expected_kernels, log;  ///< newline-joined lists, log text
  std::int64_t size = 0, created_us = 0, last_used_us = 0, hits = 0;
  std::string checksum;
  std::uint8_t flags = 0;  ///< kRow* bits
  std::vector<std::uint8_t> code;
};

/// Store entry_checksum() of the row instead of `checksum`, so that inputs get
/// past the checksum to the checks behind it.
inline constexpr std::uint8_t kRowFixChecksum = 1;
/// Store `size` as text and `code` as text: SQLite keeps whatever type it is given.
inline constexpr std::uint8_t kRowSizeAsText = 2;
inline constexpr std::uint8_t kRowCodeAsText = 4;

CacheRow read_cache_row(FuzzInput& in);
void write_cache_row(const CacheRow& row, FuzzOutput& out);

/// Creates a cache database at `file` (hipacm's own schema) holding `row`.
void write_database_with_row(const std::string& file, const CacheRow& row);

}  // namespace hipacm::fuzz
