// SPDX-License-Identifier: MIT
// failures.cpp - the negative cache: stored compile failures, read only when sane, capped by count.
#include <string>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {
namespace {

constexpr const char* kFailureColumns =
    "key, arch, source_name, backend, compiler_version, plugin_version, error_message, log, "
    "created_us, last_used_us, checksum";

// Only a row of the expected types and within the bounds is read at all: a
// forged row can neither make a lookup copy large values nor hand back
// values of another type.
constexpr const char* kFailureRowIsSane =
    "typeof(arch)='text' AND typeof(source_name)='text' AND typeof(backend)='text' AND "
    "typeof(compiler_version)='text' AND typeof(plugin_version)='text' AND "
    "typeof(error_message)='text' AND typeof(log)='text' AND typeof(checksum)='text' AND "
    "typeof(created_us)='integer' AND typeof(last_used_us)='integer' AND "
    "max(length(CAST(arch AS BLOB)), length(CAST(source_name AS BLOB)), "
    "length(CAST(backend AS BLOB)), length(CAST(compiler_version AS BLOB)), "
    "length(CAST(plugin_version AS BLOB)), length(CAST(checksum AS BLOB))) <= ?2 AND "
    "length(CAST(error_message AS BLOB)) <= ?3 AND length(CAST(log AS BLOB)) <= ?4";

// The columns of kFailureColumns, in StoredFailure's order.
StoredFailure read_failure(const Statement& s) {
  return {
      store_internal::read_labels(s), s.text(6), s.text(7), s.integer(8), s.integer(9), s.text(10)};
}

}  // namespace

bool CacheStore::has_table_locked(const char* name) {
  Statement s = db_->prepare("SELECT 1 FROM sqlite_schema WHERE type='table' AND name=?");
  s.bind(1, name);
  return s.step();
}

std::optional<StoredFailure> CacheStore::find_failure(const std::string& key) {
  return locked([&]() -> std::optional<StoredFailure> {
    // A read-only database from before the table simply misses.
    if (!writable() && !has_table_locked("failures")) return std::nullopt;
    Statement s = db_->prepare(std::string("SELECT ") + kFailureColumns +
                               " FROM failures WHERE key=?1 AND " + kFailureRowIsSane);
    s.bind(1, key)
        .bind(2, static_cast<std::int64_t>(kMaxLabelBytes))
        .bind(3, static_cast<std::int64_t>(kMaxFailureMessageBytes))
        .bind(4, static_cast<std::int64_t>(kMaxFailureLogBytes));
    if (!s.step()) return std::nullopt;
    return read_failure(s);
  });
}

bool CacheStore::put_failure(const StoredFailure& f) {
  return locked([&] {
    flush_hits_locked();
    Transaction tx(*db_);
    // A success under the same key was compiled from the same inputs; it is
    // never shadowed (lookups read entries first) nor doubted by a failure.
    Statement entry = db_->prepare("SELECT 1 FROM entries WHERE key=?");
    entry.bind(1, f.key);
    if (entry.step()) return false;
    db_->prepare(std::string("INSERT INTO failures(") + kFailureColumns +
                 ") VALUES(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                 "arch=excluded.arch, source_name=excluded.source_name, "
                 "backend=excluded.backend, compiler_version=excluded.compiler_version, "
                 "plugin_version=excluded.plugin_version, error_message=excluded.error_message, "
                 "log=excluded.log, created_us=excluded.created_us, "
                 "last_used_us=excluded.last_used_us, checksum=excluded.checksum")
        .bind(1, f.key)
        .bind(2, f.arch)
        .bind(3, f.source_name)
        .bind(4, f.backend)
        .bind(5, f.compiler_version)
        .bind(6, f.plugin_version)
        .bind(7, f.error_message)
        .bind(8, f.log)
        .bind(9, f.created_us)
        .bind(10, f.last_used_us)
        .bind(11, f.checksum)
        .step();
    db_->prepare(
           "DELETE FROM failures WHERE key IN (SELECT key FROM failures "
           "ORDER BY last_used_us DESC, key LIMIT -1 OFFSET ?)")
        .bind(1, kMaxStoredFailures)
        .step();
    tx.commit();
    return true;
  });
}

void CacheStore::remove_failure(const std::string& key) {
  locked([&] {
    Transaction tx(*db_);
    store_internal::delete_key(*db_, "failures", key);
    tx.commit();
  });
}

std::size_t CacheStore::count_failures() {
  return locked([&]() -> std::size_t {
    if (!has_table_locked("failures")) return 0;
    return store_internal::count_rows(*db_, "failures");
  });
}

}  // namespace hipacm::cache
