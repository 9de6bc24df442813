// SPDX-License-Identifier: MIT
// cache_row.cpp - one row of the cache's entries table, read from fuzz bytes and written to a file.
#include "tests/fuzz/cache_row.h"

#include <sqlite3.h>

#include "plugin/cache/integrity.h"
#include "plugin/cache/store/entry.h"
#include "plugin/cache/store/name_list.h"
#include "plugin/cache/store/sqlite_db.h"
#include "plugin/cache/store/store.h"

namespace hipacm::fuzz {
namespace {

// The entry that the cache's own row decoder builds from these columns.
cache::CacheEntry as_entry(const CacheRow& row) {
  cache::CacheEntry e;
  e.info.key = row.key;
  e.info.arch = row.arch;
  e.info.source_name = row.source_name;
  e.info.backend = row.backend;
  e.info.compiler_version = row.compiler_version;
  e.info.plugin_version = row.plugin_version;
  e.info.size = row.size;
  e.info.created_us = row.created_us;
  e.info.last_used_us = row.last_used_us;
  e.info.hits = row.hits;
  e.lowered_names = cache::split_names(row.lowered_names);
  e.expected_kernels = cache::split_names(row.expected_kernels);
  e.log = row.log;
  e.code = row.code;
  return e;
}

// The text and the integer columns, in the order that the fuzz bytes and the INSERT hold them.
constexpr std::string CacheRow::*kTextColumns[] = {&CacheRow::key,
                                                   &CacheRow::arch,
                                                   &CacheRow::source_name,
                                                   &CacheRow::backend,
                                                   &CacheRow::compiler_version,
                                                   &CacheRow::plugin_version,
                                                   &CacheRow::lowered_names,
                                                   &CacheRow::expected_kernels,
                                                   &CacheRow::log};
constexpr std::int64_t CacheRow::*kIntegerColumns[] = {&CacheRow::size, &CacheRow::created_us,
                                                       &CacheRow::last_used_us, &CacheRow::hits};

}  // namespace

CacheRow read_cache_row(FuzzInput& in) {
  CacheRow row;
  for (const auto column : kTextColumns) row.*column = in.str();
  for (const auto column : kIntegerColumns) row.*column = static_cast<std::int64_t>(in.u64());
  row.checksum = in.str();
  row.flags = in.u8();
  row.code = in.rest();
  return row;
}

void write_cache_row(const CacheRow& row, FuzzOutput& out) {
  for (const auto column : kTextColumns) out.str(row.*column);
  for (const auto column : kIntegerColumns) out.u64(static_cast<std::uint64_t>(row.*column));
  out.str(row.checksum);
  out.u8(row.flags);
  out.raw(row.code);
}

void write_database_with_row(const std::string& file, const CacheRow& row) {
  // hipacm creates the schema; the row goes in raw, as a hostile file would hold it.
  cache::CacheStore::open(file, cache::CacheStore::Access::kReadWrite, /*network_fs=*/true);
  cache::Database db(file, SQLITE_OPEN_READWRITE);
  cache::Statement insert = db.prepare(
      "INSERT INTO entries(key, arch, source_name, backend, compiler_version, plugin_version, "
      "lowered_names, expected_kernels, log, size, created_us, last_used_us, hits, checksum, "
      "code) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  int index = 1;
  for (const auto column : kTextColumns) insert.bind(index++, row.*column);
  for (const auto column : kIntegerColumns) {
    if (column == &CacheRow::size && (row.flags & kRowSizeAsText) != 0)
      insert.bind(index++, std::to_string(row.size) + "x");
    else
      insert.bind(index++, row.*column);
  }
  insert.bind(
      14, (row.flags & kRowFixChecksum) != 0 ? cache::entry_checksum(as_entry(row)) : row.checksum);
  if ((row.flags & kRowCodeAsText) != 0)
    insert.bind(15,
                std::string_view(reinterpret_cast<const char*>(row.code.data()), row.code.size()));
  else
    insert.bind_blob(15, row.code.data(), row.code.size());
  insert.step();
}

}  // namespace hipacm::fuzz
