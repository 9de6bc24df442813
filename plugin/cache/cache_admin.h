// SPDX-License-Identifier: MIT
// cache_admin.h - the maintenance API for tools: stats, listing, verify, prune, clear, export,
// import.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/cache/store/entry.h"
#include "plugin/cache/store/store.h"

namespace hipacm::cache {

/// What a cache holds.
struct CacheStats {
  std::string path;
  std::int64_t entries = 0;
  std::int64_t total_bytes = 0;  ///< payload bytes (what HIPACM_CACHE_MAX_BYTES bounds)
  std::int64_t file_bytes = 0;   ///< the database file itself, plus its WAL
  std::int64_t total_hits = 0;
  std::vector<ArchTotals> by_arch;
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
  /// Opens the default user cache: $HIPACM_CACHE_DIR, else
  /// $XDG_CACHE_HOME/hipacm, else ~/.cache/hipacm.
  static CacheAdmin open_default();
  /// The default user cache's database path ("" when none can be derived).
  static std::string default_path();

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
  /// Writes every entry (or one arch's) to a new SQLite file of the same
  /// schema at `file` (refused if it exists). Returns the entry count.
  std::size_t export_to(const std::string& file, const std::string& arch = "");
  /// export_to with a code-object version limit, reporting what it left out and why.
  ExportReport export_entries(const std::string& file, const ExportOptions& options);
  /// Merges an exported file; every entry is validated first and rejected
  /// entries are reported, never stored.
  ImportReport import_from(const std::string& file);
  /// The whole entry for a key (for `inspect`), or nullopt.
  std::optional<CacheEntry> lookup(const std::string& key);

 private:
  explicit CacheAdmin(std::shared_ptr<CacheStore> store);
  std::shared_ptr<CacheStore> store_;
};

}  // namespace hipacm::cache
