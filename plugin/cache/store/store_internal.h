// SPDX-License-Identifier: MIT
// store_internal.h - what the CacheStore sources share; for plugin/cache/store/ alone.
#pragma once

#include <boost/thread/lock_guard.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "plugin/cache/store/sqlite_db.h"
#include "plugin/cache/store/store.h"

namespace hipacm::cache {
namespace store_internal {

// The columns of `entries`, in the order the decoder and the insert use them
// and the layout check requires them.
inline constexpr const char* kEntryColumns =
    "key, arch, source_name, backend, compiler_version, plugin_version, lowered_names, "
    "expected_kernels, log, size, created_us, last_used_us, hits, checksum, code";

// Real payload bytes, from the values themselves: the size column is written
// for listings by older versions and never trusted (a forged size must not
// evict the cache). length() of a blob reads only the record header.
inline constexpr const char* kPayloadBytes =
    "(length(code) + length(CAST(log AS BLOB)) + length(CAST(lowered_names AS BLOB)))";

// Resets a cached statement however the step loop ends.
struct ResetOnExit {
  Statement& s;
  ~ResetOnExit() { s.reset(); }
};

/// The payload bytes of every entry (see kPayloadBytes).
std::int64_t payload_total(Database& db);

/// The number of rows in `table`.
std::size_t count_rows(Database& db, std::string_view table);

/// Deletes the row of `table` under `key`, in the caller's transaction.
void delete_key(Database& db, std::string_view table, const std::string& key);

/// Reads the six label columns that entries and failures both have and both select first (key,
/// arch, source_name, backend, compiler_version, plugin_version): the EntryLabels that EntryInfo
/// and StoredFailure share, so the readers of both tables cannot drift apart on them.
inline EntryLabels read_labels(const Statement& s) {
  return {s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5)};
}

/// Creates `path` empty and 0600 unless something is there already (database_file.cpp).
void create_private_file(const std::string& path);

/// Moves the database at `path` and its -wal, -shm and -journal to
/// moved_aside_name(path); returns that name (database_file.cpp).
std::string move_aside(const std::string& path);

/// Refuses a file that is not a hipacm cache of kSchemaVersion (throws
/// SqliteError, SQLITE_NOTADB). With `create`, first creates the missing
/// tables and records the version in a new file (layout.cpp).
void prepare_schema(Database& db, const std::string& path, bool create);

}  // namespace store_internal

// Every public operation runs under the mutex, on a connection opened on
// demand; corruption found by a read-write store moves the file aside before
// the error propagates, so the next call works on a fresh database.
template <typename Fn>
auto CacheStore::locked(Fn&& fn) -> decltype(fn()) {
  boost::lock_guard<boost::mutex> lock(mutex_);
  progress_steps_ = 0;
  try {
    if (!db_) open_locked();
    return fn();
  } catch (const SqliteError& e) {
    if (e.is_corruption() && access_ == Access::kReadWrite) {
      try {
        recover_locked(e.what());
      } catch (...) {
        db_.reset();  // the next call retries the open
      }
    }
    throw;
  }
}

}  // namespace hipacm::cache
