// cache_admin.cpp - the maintenance API for tools: stats, listing, verify, prune, clear, export,
// import.
#include "plugin/cache/cache_admin.h"

#include <filesystem>
#include <stdexcept>

#include "plugin/cache/integrity.h"
#include "plugin/cache/location.h"

namespace hipacm::cache {
namespace {

std::int64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::int64_t>(n);
}

}  // namespace

CacheAdmin::CacheAdmin(std::shared_ptr<CacheStore> store) : store_(std::move(store)) {}

CacheAdmin CacheAdmin::open(const std::string& db_path) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  std::string why;
  if (!dir.empty() && !prepare_writable_dir(dir, &why)) throw std::runtime_error(why);
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

std::size_t CacheAdmin::export_to(const std::string& file, const std::string& arch) {
  std::error_code ec;
  if (std::filesystem::exists(file, ec))
    throw std::runtime_error(file + " already exists; export writes a new file");
  // A rollback journal, not WAL: the export is one self-contained file that
  // can be copied, shipped, and opened read-only (e.g. as a system cache).
  auto target = CacheStore::open(file, CacheStore::Access::kReadWrite, /*network_fs=*/true);
  std::size_t exported = 0;
  store_->for_each(
      [&](CacheEntry&& entry) {
        target->put(entry);
        ++exported;
      },
      arch);
  return exported;
}

ImportReport CacheAdmin::import_from(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw std::runtime_error(file + " does not exist");
  auto source = CacheStore::open(file, CacheStore::Access::kReadOnly);
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
    store_->put(entry);
    ++report.accepted;
  });
  return report;
}

std::optional<CacheEntry> CacheAdmin::lookup(const std::string& key) { return store_->find(key); }

}  // namespace hipacm::cache
