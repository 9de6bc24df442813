// SPDX-License-Identifier: MIT
// cache_admin.cpp - the maintenance API for tools: stats, listing, verify, prune, clear, export,
// import.
#include "plugin/cache/cache_admin.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/store/location.h"
#include "support/settings.h"
#include "support/status_error.h"

namespace hipacm::cache {
namespace {

std::int64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::int64_t>(n);
}

// A new, empty, private (0600) file beside `target`, removed on destruction
// unless it was moved into place.
class TempFileBeside {
 public:
  explicit TempFileBeside(const std::string& target) : path_(target + ".tmp-XXXXXX") {
    const int fd = ::mkstemp(path_.data());
    if (fd < 0)
      throw std::runtime_error("cannot create a file beside " + target + ": " +
                               std::strerror(errno));
    ::close(fd);
  }
  TempFileBeside(const TempFileBeside&) = delete;
  TempFileBeside& operator=(const TempFileBeside&) = delete;
  ~TempFileBeside() {
    if (!placed_) ::unlink(path_.c_str());
  }
  const std::string& path() const noexcept { return path_; }

  /// Gives the file the name `target`, which must still not exist: link(2)
  /// never replaces a file and never follows a symlink at the new name.
  void place_as(const std::string& target) {
    if (::link(path_.c_str(), target.c_str()) != 0)
      throw std::runtime_error("cannot create " + target + ": " + std::strerror(errno));
    placed_ = true;
    ::unlink(path_.c_str());
  }

 private:
  std::string path_;
  bool placed_ = false;
};

// Reads of an unlocked database that find it changed under them before giving up.
constexpr int kUnlockedReadAttempts = 3;

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

// SQLite's URI for `path` with `query`; the bytes a URI gives meaning to are escaped, and the
// empty authority ("file://") keeps a path that starts with "//" a path.
std::string file_uri(const std::string& path, const char* query) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  std::string uri = "file://";
  for (const char c : ec ? path : absolute) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '%' || c == '?' || c == '#' || byte < 0x20 || byte >= 0x7f) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", byte);
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

// What changes when anything writes the file: a read that sees the same before and after saw
// one state of it.
struct FileState {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  timespec modified{};
  timespec changed{};
  bool operator==(const FileState& other) const {
    return std::tie(device, inode, size, modified.tv_sec, modified.tv_nsec, changed.tv_sec,
                    changed.tv_nsec) == std::tie(other.device, other.inode, other.size,
                                                 other.modified.tv_sec, other.modified.tv_nsec,
                                                 other.changed.tv_sec, other.changed.tv_nsec);
  }
};

FileState file_state(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

// Opens `path` read-only. A journal beside it means a writer is (or was) at work, and only
// SQLite's locking reads it consistently; without one every committed byte is in the file, and
// immutable=1 reads it creating nothing, where even a read-only connection would create a WAL
// and its index beside a WAL-mode database (and fail where it may not).
std::shared_ptr<CacheStore> open_for_reading(const std::string& path, bool* unlocked) {
  refuse_non_regular_file(path);
  *unlocked = !exists(path + "-wal") && !exists(path + "-journal");
  return CacheStore::open(file_uri(path, *unlocked ? "immutable=1" : "mode=ro&readonly_shm=1"),
                          CacheStore::Access::kReadOnly);
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The store names the URI it opened; the user gave a path.
std::runtime_error error_naming_path(const std::exception& e, const std::string& path) {
  return std::runtime_error(replace_all(replace_all(e.what(), file_uri(path, "immutable=1"), path),
                                        file_uri(path, "mode=ro&readonly_shm=1"), path));
}

}  // namespace

CacheAdmin::CacheAdmin(std::shared_ptr<CacheStore> store)
    : CacheAdmin(std::move(store), "", false) {}

CacheAdmin::CacheAdmin(std::shared_ptr<CacheStore> store, std::string path, bool unlocked)
    : store_(std::move(store)),
      path_(path.empty() ? store_->path() : std::move(path)),
      unlocked_(unlocked) {}

CacheAdmin CacheAdmin::inspect(const std::string& db_path) {
  if (!exists(db_path))
    throw StatusError(
        HIPACM_ERROR_INVALID_ARGUMENT,
        "no cache at " + db_path + ": there is no database file there (nothing was created)");
  bool unlocked = false;
  try {
    auto store = open_for_reading(db_path, &unlocked);
    return CacheAdmin(std::move(store), db_path, unlocked);
  } catch (const std::exception& e) {
    throw error_naming_path(e, db_path);
  }
}

template <class Fn>
auto CacheAdmin::consistent_read(Fn&& fn) -> decltype(fn()) {
  if (path_ == store_->path()) return fn();  // opened by path, with SQLite's locking
  for (int attempt = 1;; ++attempt) {
    const FileState before = file_state(path_);
    try {
      auto result = fn();
      if (!unlocked_ || file_state(path_) == before) return result;
    } catch (const std::exception& e) {
      // An error with the file unchanged is the file's own, not a torn read.
      if (!unlocked_ || file_state(path_) == before) throw error_naming_path(e, path_);
    }
    if (attempt == kUnlockedReadAttempts)
      throw std::runtime_error(path_ + " kept changing while it was read; try again");
    // A fresh connection: an unlocked one never looks at the file again once it has read it.
    *this = inspect(path_);
  }
}

CacheAdmin CacheAdmin::open(const std::string& db_path) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  if (!dir.empty()) {
    if (Expected<void> prepared = prepare_writable_dir(dir); !prepared)
      throw std::runtime_error(prepared.failure().message);
  }
  const bool network = network_filesystem(dir.empty() ? "." : dir).has_value();
  return CacheAdmin(CacheStore::open(db_path, CacheStore::Access::kReadWrite, network));
}

CacheAdmin CacheAdmin::open_read_only(const std::string& db_path) {
  std::error_code ec;
  if (!std::filesystem::exists(db_path, ec)) throw std::runtime_error(db_path + " does not exist");
  return CacheAdmin(CacheStore::open(db_path, CacheStore::Access::kReadOnly));
}

std::string CacheAdmin::default_path() {
  const std::string dir = user_cache_dir("");
  return dir.empty() ? dir : database_in(dir);
}

std::string CacheAdmin::path_in(const std::string& dir) { return database_in(dir); }

CacheAdmin CacheAdmin::open_default() {
  const std::string path = default_path();
  if (path.empty())
    throw std::runtime_error(std::string("no cache directory: set ") +
                             settings::name(settings::Id::kCacheDir) + ", XDG_CACHE_HOME or HOME");
  return open(path);
}

const std::string& CacheAdmin::path() const noexcept { return path_; }

CacheStats CacheAdmin::stats() {
  CacheStats s = consistent_read([&] {
    CacheStats read;
    read.by_arch = store_->totals_by_arch();
    read.recorded = store_->recorded_counts();
    read.recorded_hits = at(read.recorded.counts, Counter::kHits);
    read.recorded_misses = at(read.recorded.counts, Counter::kMisses);
    read.stored_failures = static_cast<std::int64_t>(store_->count_failures());
    return read;
  });
  s.path = path_;
  for (const auto& arch : s.by_arch) {
    s.entries += arch.entries;
    s.total_bytes += arch.bytes;
    s.total_hits += arch.hits;
  }
  s.file_bytes = file_size_or_zero(s.path) + file_size_or_zero(s.path + "-wal");
  s.max_bytes = max_cache_bytes();
  return s;
}

std::vector<EntryInfo> CacheAdmin::list(const std::string& arch) {
  return consistent_read([&] { return store_->list(arch); });
}

VerifyReport CacheAdmin::verify(bool remove_bad) {
  VerifyReport report;
  store_->for_each([&](CacheEntry&& entry) {
    ++report.checked;
    const Expected<void> valid = validate_entry(entry, "");
    if (valid) return;
    report.bad.push_back({entry.info.key, valid.failure().message});
  });
  if (remove_bad) {
    for (const auto& bad : report.bad) {
      store_->remove(bad.key);
      ++report.removed;
    }
  }
  return report;
}

std::size_t CacheAdmin::prune(std::int64_t max_bytes) { return store_->evict_to(max_bytes); }

std::size_t CacheAdmin::clear() { return store_->clear(); }

CounterReset CacheAdmin::reset_stats() { return store_->reset_counters(); }

std::size_t ExportReport::left_out() const {
  std::size_t total = 0;
  for (const auto& [version, count] : left_out_by_version) total += count;
  return total;
}

std::size_t CacheAdmin::export_to(const std::string& file, const std::string& arch) {
  return export_entries(file, {arch, 0}).exported;
}

ExportReport CacheAdmin::export_entries(const std::string& file, const ExportOptions& options) {
  // lstat, not stat: a symlink, even a dangling one, is refused rather than
  // followed to wherever it points.
  struct stat st {};
  if (::lstat(file.c_str(), &st) == 0)
    throw std::runtime_error(file +
                             (S_ISLNK(st.st_mode) ? " is a symbolic link" : " already exists") +
                             "; export writes a new file");
  // Written beside the target and linked into place once complete: a failed
  // export leaves nothing, and nobody sees a half-written file.
  TempFileBeside temp(file);
  ExportReport report;
  {
    // A rollback journal, not WAL: the export is one self-contained file that
    // can be copied, shipped, and opened read-only (e.g. as a system cache).
    auto target =
        CacheStore::open(temp.path(), CacheStore::Access::kReadWrite, /*network_fs=*/true);
    store_->for_each(
        [&](CacheEntry&& entry) {
          // The stored code object's own header says which runtimes can load it; no column
          // records it, and a row could not be trusted to.
          const int version = backend::code_object_version(entry.code).value_or(0);
          if (options.max_code_object_version > 0 && version > options.max_code_object_version) {
            ++report.left_out_by_version[version];
            return;
          }
          target->put(entry);
          ++report.exported;
          ++report.exported_by_version[version];
        },
        options.arch);
  }  // closed: no journal is left beside the file
  temp.place_as(file);
  return report;
}

ImportReport CacheAdmin::import_from(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw std::runtime_error(file + " does not exist");
  // The file is untrusted: opening it checks its layout (no views, triggers
  // or generated columns), every statement on it has a work budget, and
  // quick_check runs before any entry is read.
  std::shared_ptr<CacheStore> source;
  try {
    source = CacheStore::open(file, CacheStore::Access::kReadOnly);
    source->quick_check();
  } catch (const SqliteError& e) {
    // Opening reads the schema and a table or two, so damage there shows before quick_check does.
    throw std::runtime_error("cannot import " + file + ": " +
                             (e.is_corruption() ? "the file is damaged: " : "") + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot import " + file + ": " + e.what());
  }
  ImportReport report;
  source->for_each([&](CacheEntry&& entry) {
    std::string key = entry.info.key;
    const Expected<Imported> imported = import_entry(std::move(entry), "");
    if (!imported) {
      report.rejected.push_back({std::move(key), imported.failure().message});
      return;
    }
    switch (imported.value()) {
      case Imported::kAccepted:
        ++report.accepted;
        break;
      case Imported::kDuplicate:
        ++report.duplicates;
        break;
    }
  });
  return report;
}

Expected<CacheAdmin::Imported> CacheAdmin::import_entry(CacheEntry entry,
                                                        const std::string& expected_arch) {
  if (Expected<void> valid = validate_entry(entry, expected_arch); !valid)
    return std::move(valid).failure();
  const std::optional<CacheEntry> existing = store_->find(entry.info.key);
  if (existing.has_value() && existing->checksum == entry.checksum) return Imported::kDuplicate;
  entry.info.last_used_us = now_us();
  entry.info.hits = 0;
  store_->put(entry);
  return Imported::kAccepted;
}

std::optional<CacheEntry> CacheAdmin::lookup(const std::string& key) {
  return consistent_read([&] { return store_->find(key); });
}

}  // namespace hipacm::cache
