// SPDX-License-Identifier: MIT
// store.h - one cache database file: lookups, inserts, LRU eviction, and recovery from damage.
#pragma once

#include <boost/thread/mutex.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/cache/store/counters.h"
#include "plugin/cache/store/entry.h"
#include "plugin/cache/store/sqlite_db.h"
#include "plugin/cache/store/stored_failure.h"

namespace hipacm::cache {

/// Per-arch totals of a database.
struct ArchTotals {
  std::string arch;
  std::int64_t entries = 0;
  std::int64_t bytes = 0;
  std::int64_t hits = 0;
};

/// A cache database. Thread-safe: one connection, used under one mutex.
/// Methods throw SqliteError (or std::exception) on failure; a damaged file
/// found by a read-write store is moved aside and replaced by an empty one
/// before the error propagates, so the next call works again.
class CacheStore {
 public:
  enum class Access { kReadOnly, kReadWrite };

  /// Opens (read-write: creating) the database at `path`. WAL journal unless
  /// `network_fs`, where SQLite's shared-memory WAL index is unsafe. A
  /// read-write open of a damaged or foreign file moves it aside (renamed
  /// with a UTC timestamp) and starts fresh, with one logged warning.
  /// Throws when the file cannot be used at all, and for a path that names
  /// something other than a regular file (a FIFO would block the open
  /// forever). A "file:" URI is opened as it is: its caller checks the file.
  static std::shared_ptr<CacheStore> open(const std::string& path, Access access,
                                          bool network_fs = false);

  /// Only open() can make the tag; the constructor is public for make_shared.
  class OpenTag {
    friend class CacheStore;
    OpenTag() = default;
  };
  CacheStore(OpenTag, std::string path, Access access, bool network_fs);
  CacheStore(const CacheStore&) = delete;
  CacheStore& operator=(const CacheStore&) = delete;

  const std::string& path() const noexcept { return path_; }
  bool writable() const noexcept { return access_ == Access::kReadWrite; }

  std::optional<CacheEntry> find(const std::string& key);
  /// Records a hit: last use now, hit count + 1. Buffered in memory and
  /// written in batches, so that a hit is a read (no write transaction, no
  /// WAL checkpoint) almost every time.
  void touch(const std::string& key);
  /// Writes the buffered hits, misses and failure uses now.
  void flush_hits();
  /// Records a lookup that found nothing usable (the other half of the hit
  /// rate). Buffered like touch() and written in the same batches; a no-op on
  /// a read-only store.
  void record_miss();
  /// Hits and misses recorded in this database (in the meta table) since it
  /// was created or last cleared, plus this process's unwritten ones. Unlike
  /// the entries' own hit counts, neither is lost when an entry is evicted,
  /// so hits / (hits + misses) is the hit rate over one period.
  std::int64_t recorded_hits();
  std::int64_t recorded_misses();
  /// Records one event of `counter` (counters.h), buffered like touch() and written in the same
  /// batches; a no-op on a read-only store. touch() and touch_failure() count their own.
  void record(Counter counter);
  /// Every counter as recorded_hits() reads hits, and since when they count.
  RecordedCounts recorded_counts();
  /// Zeroes the recorded counters and the entries' hit counts in one write transaction, which
  /// other processes' batches wait for and then add to; returns what they were. Entries,
  /// payloads, stored failures, library facts and last-use times are left as they are. Throws
  /// on a read-only store.
  CounterReset reset_counters();
  /// Inserts or replaces the entry, in one transaction; a stored failure
  /// under the same key goes (the success disproves it).
  void put(const CacheEntry& entry);
  void remove(const std::string& key);
  /// Removes least-recently-used entries, never `keep_key`, until the
  /// payload total is at most max_bytes. Returns how many were removed.
  std::size_t evict_to(std::int64_t max_bytes, const std::string& keep_key = "");
  /// Removes every entry, stored failure and library fact, and zeroes the
  /// recorded counters (counters.h); returns the entries removed.
  std::size_t clear();

  /// The negative cache. The stored failure for `key`, or nullopt: also when
  /// the database has no failures table, or the row has values of the wrong
  /// type or over the bounds of stored_failure.h. Its checksum is the
  /// caller's to check (integrity.h).
  std::optional<StoredFailure> find_failure(const std::string& key);
  /// Stores `failure` (inserting or replacing) unless an entry holds its key,
  /// then drops the least recently used past kMaxStoredFailures. Returns
  /// whether it was stored.
  bool put_failure(const StoredFailure& failure);
  /// Records the use of a stored failure, buffered like touch().
  void touch_failure(const std::string& key);
  void remove_failure(const std::string& key);
  std::size_t count_failures();

  /// A library fact (hip_backend/library_facts.h) recorded by some process, or
  /// nullopt. Facts describe this machine's libraries: they are never exported.
  std::optional<std::string> find_fact(const std::string& key);
  /// Records a library fact; a no-op on a read-only store.
  void put_fact(const std::string& key, const std::string& value);
  std::size_t count_facts();

  std::int64_t total_bytes();
  std::vector<ArchTotals> totals_by_arch();
  /// Bookkeeping of every entry (or one arch's), most recently used first.
  std::vector<EntryInfo> list(const std::string& arch = "");
  /// Calls fn with each whole entry (or one arch's), in key order.
  void for_each(const std::function<void(CacheEntry&&)>& fn, const std::string& arch = "");

  /// Runs SQLite's quick_check; throws SqliteError (SQLITE_CORRUPT) naming
  /// the first problems. For files from elsewhere, before an import.
  void quick_check();

  /// Gives up the connection without closing it (see Database::abandon).
  void abandon() noexcept;

  /// Runs raw SQL on this connection: tests inject faults with pragmas.
  void execute_for_testing(const std::string& sql);

 private:
  void open_locked();
  void open_once_locked();
  void recover_locked(const std::string& why);
  // Finalizes the cached statements, which belong to the connection, before
  // the connection itself is closed, reopened or abandoned.
  void drop_statements_locked() noexcept;
  void flush_hits_locked();
  void note_pending_locked();
  std::int64_t recorded_counter_locked(const char* name);
  bool has_table_locked(const char* name);
  template <typename Fn>
  auto locked(Fn&& fn) -> decltype(fn());
  // SQLite's progress handler: interrupts a statement once the current
  // operation has used its budget of VM steps.
  static int on_progress(void* self) noexcept;

  const std::string path_;
  const Access access_;
  const bool network_fs_;
  boost::mutex mutex_;
  std::optional<Database> db_;
  std::optional<Statement> find_;
  std::optional<Statement> touch_;
  std::optional<Statement> put_;
  struct PendingHit {
    std::int64_t count = 0;
    std::int64_t last_used_us = 0;
  };
  std::map<std::string, PendingHit> pending_hits_;
  std::map<std::string, std::int64_t> pending_failure_uses_;  // key -> last use
  Counts pending_counts_{};
  std::int64_t pending_total_ = 0;
  // VM steps (in units of the handler's period) of the current operation;
  // reset at its start, under mutex_.
  std::uint64_t progress_steps_ = 0;
};

/// "<path>.corrupt-<UTC timestamp>" for a file moved aside.
std::string moved_aside_name(const std::string& path);

/// Throws std::runtime_error when something exists at `path` (following
/// symbolic links) that is not a regular file: a FIFO, a device, a directory,
/// a socket. Opening a FIFO as a database blocks until a writer comes, which
/// would hang the host; the others only give confusing SQLite errors.
void refuse_non_regular_file(const std::string& path);

}  // namespace hipacm::cache
