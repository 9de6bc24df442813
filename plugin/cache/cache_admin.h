// SPDX-License-Identifier: MIT
// cache_admin.h - the maintenance API for tools: stats, listing, verify, prune, clear, export,
// import.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "plugin/cache/store/entry.h"
#include "plugin/cache/store/store.h"
#include "support/failure.h"

namespace hipacm::cache {

/// What a cache holds.
struct CacheStats {
  std::string path;
  std::int64_t entries = 0;
  std::int64_t total_bytes = 0;  ///< payload bytes (what HIPACM_CACHE_MAX_BYTES bounds)
  std::int64_t file_bytes = 0;   ///< the database file itself, plus its WAL
  std::int64_t total_hits = 0;   ///< the entries' own hit counts (an evicted entry's go with it)
  std::vector<ArchTotals> by_arch;
  std::int64_t max_bytes = 0;  ///< the bound hosts evict to: max_cache_bytes() (location.h)
  /// Lookups that hosts recorded in this database since it was made or cleared: served from it
  /// (hits) and not (misses, which compiled). hits / (hits + misses) is its hit rate.
  std::int64_t recorded_hits = 0;
  std::int64_t recorded_misses = 0;
  std::int64_t stored_failures = 0;  ///< compile failures kept by the negative cache
  /// Every recorded counter (counters.h; hits and misses as above), and when they were zeroed.
  RecordedCounts recorded;
};

/// An entry that failed a check, and why.
struct RejectedEntry {
  std::string key;
  std::string reason;
};

struct VerifyReport {
  std::int64_t checked = 0;
  std::vector<RejectedEntry> bad;
  std::int64_t removed = 0;
};

struct ImportReport {
  std::int64_t accepted = 0;    ///< new or replaced entries
  std::int64_t duplicates = 0;  ///< already present with the same checksum
  std::vector<RejectedEntry> rejected;
};

/// Which entries an export writes.
struct ExportOptions {
  std::string arch;                 ///< only entries for this arch; "" = every arch
  int max_code_object_version = 0;  ///< leave out AMDGPU code objects above it; 0 = no limit
};

/// What an export wrote and left out. Versions are read from each stored code object's header
/// (code_object_version in amdgpu_target.h); 0 stands for code with none (SPIR-V, CUBIN, PTX).
struct ExportReport {
  std::size_t exported = 0;
  std::map<int, std::size_t> exported_by_version;
  std::map<int, std::size_t> left_out_by_version;
  std::size_t left_out() const;
};

/// One cache database, opened read-write for maintenance. Methods throw
/// std::runtime_error (hipacm::cache::SqliteError, hipacm::StatusError) with a
/// message fit for a user. Safe to use while hosts use the same cache.
///
///   auto cache = CacheAdmin::open_default();
///   for (const EntryInfo& e : cache.list()) ...;
///   cache.prune(1 << 30);
class CacheAdmin {
 public:
  /// Opens (creating if needed) the database file at `db_path`.
  static CacheAdmin open(const std::string& db_path);
  /// Opens an existing database without writing to it (e.g. a system cache
  /// or an export): stats, list, verify(false), export_to and lookup work;
  /// the rest throw.
  static CacheAdmin open_read_only(const std::string& db_path);
  /// Opens an existing database only to look at it (stats, list, lookup), never writing or
  /// creating anything: not the database, not a journal beside it. It works on a read-only file
  /// system and for a user who may not write the cache (a system cache). A database that no
  /// process has open is read without locks, and read again if it changed meanwhile. Throws
  /// StatusError (INVALID_ARGUMENT) when there is no file at `db_path`.
  static CacheAdmin inspect(const std::string& db_path);
  /// Opens the default user cache: $HIPACM_CACHE_DIR, else
  /// $XDG_CACHE_HOME/hipacm, else ~/.cache/hipacm.
  static CacheAdmin open_default();
  /// The default user cache's database path ("" when none can be derived).
  static std::string default_path();
  /// The database file inside the cache directory `dir`.
  static std::string path_in(const std::string& dir);

  const std::string& path() const noexcept;

  CacheStats stats();
  /// Every entry's bookkeeping (or one arch's), most recently used first.
  std::vector<EntryInfo> list(const std::string& arch = "");
  /// Re-checks every entry (checksum, code-object check, arch); with
  /// remove_bad, deletes the ones that fail.
  VerifyReport verify(bool remove_bad);
  /// Evicts least-recently-used entries until the payload is <= max_bytes.
  /// Returns how many were removed.
  std::size_t prune(std::int64_t max_bytes);
  /// Removes every entry; returns how many there were.
  std::size_t clear();
  /// Zeroes the recorded counters and the entries' hit counts at once (CacheStore::
  /// reset_counters); returns what they were. Needs a cache opened read-write.
  CounterReset reset_stats();
  /// Writes every entry (or one arch's) to a new SQLite file of the same
  /// schema at `file` (refused if it exists). Returns the entry count.
  std::size_t export_to(const std::string& file, const std::string& arch = "");
  /// export_to with a code-object version limit, reporting what it left out and why.
  ExportReport export_entries(const std::string& file, const ExportOptions& options);
  /// Merges an exported file; every entry is validated first and rejected
  /// entries are reported, never stored.
  ImportReport import_from(const std::string& file);
  /// Stores one entry from elsewhere (an import file, another machine) as import_from does:
  /// validated first (for `expected_arch` too, unless it is empty), never stored when it fails,
  /// left alone when the same checksum is already there, otherwise written in one transaction.
  /// Returns what became of it, or the validation's failure (INVALID_ARGUMENT) that rejected it.
  enum class Imported { kAccepted, kDuplicate };
  Expected<Imported> import_entry(CacheEntry entry, const std::string& expected_arch);
  /// The whole entry for a key (for `inspect`), or nullopt.
  std::optional<CacheEntry> lookup(const std::string& key);

 private:
  explicit CacheAdmin(std::shared_ptr<CacheStore> store);
  CacheAdmin(std::shared_ptr<CacheStore> store, std::string path, bool unlocked);
  // Runs a read; for an unlocked read, again while the file changed under it.
  template <class Fn>
  auto consistent_read(Fn&& fn) -> decltype(fn());
  std::shared_ptr<CacheStore> store_;
  std::string path_;
  bool unlocked_ = false;  ///< opened as SQLite's immutable=1: no locks, no files beside it
};

}  // namespace hipacm::cache
