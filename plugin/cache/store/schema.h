// SPDX-License-Identifier: MIT
// schema.h - the cache database's layout and its version.
#pragma once

namespace hipacm::cache {

/// Part of every key and recorded in the meta table: a layout change makes
/// old databases miss instead of being misread.
inline constexpr int kSchemaVersion = 1;

/// The file name of a cache database inside a cache directory.
inline constexpr const char* kDatabaseFileName = "kernels.sqlite3";

// The label columns (EntryLabels, entry_labels.h) that entries and failures both begin with, in
// the order their readers select them. A macro so that kCreateSchema stays one literal.
#define HIPACM_CACHE_LABEL_COLUMNS      \
  "  key TEXT PRIMARY KEY,\n"           \
  "  arch TEXT NOT NULL,\n"             \
  "  source_name TEXT NOT NULL,\n"      \
  "  backend TEXT NOT NULL,\n"          \
  "  compiler_version TEXT NOT NULL,\n" \
  "  plugin_version TEXT NOT NULL,\n"

// library_facts holds what hip_backend/library_facts.cpp remembers about this
// machine's compiler libraries, so that a process whose kernels are all cached
// never loads them. It is additive: databases without it simply miss.
// `code` is last so that scans of the small columns rarely touch the blob's
// overflow pages; (last_used, size) is a covering index for LRU eviction and
// the size total.
// failures is the negative cache (stored_failure.h), additive like
// library_facts; it holds no code object, and its rows are bounded by count
// (kMaxStoredFailures) and length instead of counting against the size bound.
inline constexpr const char* kCreateSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries(
)sql" HIPACM_CACHE_LABEL_COLUMNS R"sql(  lowered_names TEXT NOT NULL,
  expected_kernels TEXT NOT NULL,
  log TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_us INTEGER NOT NULL,
  last_used_us INTEGER NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0,
  checksum TEXT NOT NULL,
  code BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS entries_lru ON entries(last_used_us, size);
CREATE TABLE IF NOT EXISTS library_facts(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  recorded_us INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS failures(
)sql" HIPACM_CACHE_LABEL_COLUMNS R"sql(  error_message TEXT NOT NULL,
  log TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  last_used_us INTEGER NOT NULL,
  checksum TEXT NOT NULL);
)sql";

}  // namespace hipacm::cache
