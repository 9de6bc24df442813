// SPDX-License-Identifier: MIT
// cache_admin.cpp - the maintenance API for tools: stats, listing, verify, prune, clear, export,
// import.
#include "plugin/cache/cache_admin.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/store/location.h"

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

}  // namespace

CacheAdmin::CacheAdmin(std::shared_ptr<CacheStore> store) : store_(std::move(store)) {}

CacheAdmin CacheAdmin::open(const std::string& db_path) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  if (!dir.empty()) {
    if (Expected<void> prepared = prepare_writable_dir(dir); !prepared)
      throw std::runtime_error(prepared.failure().message);
  }
  std::string fs_name;
  const bool network = on_network_filesystem(dir.empty() ? "." : dir, &fs_name);
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

CacheAdmin CacheAdmin::open_default() {
  const std::string path = default_path();
  if (path.empty())
    throw std::runtime_error("no cache directory: set HIPACM_CACHE_DIR, XDG_CACHE_HOME or HOME");
  return open(path);
}

const std::string& CacheAdmin::path() const noexcept { return store_->path(); }

CacheStats CacheAdmin::stats() {
  CacheStats s;
  s.path = store_->path();
  s.by_arch = store_->totals_by_arch();
  for (const auto& arch : s.by_arch) {
    s.entries += arch.entries;
    s.total_bytes += arch.bytes;
    s.total_hits += arch.hits;
  }
  s.file_bytes = file_size_or_zero(s.path) + file_size_or_zero(s.path + "-wal");
  return s;
}

std::vector<EntryInfo> CacheAdmin::list(const std::string& arch) { return store_->list(arch); }

VerifyReport CacheAdmin::verify(bool remove_bad) {
  VerifyReport report;
  store_->for_each([&](CacheEntry&& entry) {
    ++report.checked;
    std::string why;
    if (validate_entry(entry, "", &why)) return;
    report.bad.push_back({entry.info.key, why});
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
    std::string why;
    if (!validate_entry(entry, "", &why)) {
      report.rejected.push_back({entry.info.key, why});
      return;
    }
    if (auto existing = store_->find(entry.info.key);
        existing && existing->checksum == entry.checksum) {
      ++report.duplicates;
      return;
    }
    entry.info.last_used_us = now_us();
    entry.info.hits = 0;
    store_->put(entry);
    ++report.accepted;
  });
  return report;
}

std::optional<CacheEntry> CacheAdmin::lookup(const std::string& key) { return store_->find(key); }

}  // namespace hipacm::cache
