// SPDX-License-Identifier: MIT
// listing.cpp - reads over all entries: payload and per-arch totals, listings, the export walk.
#include <string>
#include <utility>
#include <vector>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {
namespace {

using store_internal::kPayloadBytes;

// Rows a scan of a database that is not the user's own (an import, a system
// cache) may list before it is refused as not a plausible cache.
constexpr std::size_t kMaxUntrustedEntries = 1'000'000;

// The labels, then size, created_us, last_used_us and hits: EntryInfo's order.
EntryInfo read_info(const Statement& s) {
  return {store_internal::read_labels(s), s.integer(6), s.integer(7), s.integer(8), s.integer(9)};
}

}  // namespace

namespace store_internal {

std::int64_t payload_total(Database& db) {
  Statement s =
      db.prepare(std::string("SELECT COALESCE(SUM(") + kPayloadBytes + "), 0) FROM entries");
  s.step();
  return s.integer(0);
}

std::size_t count_rows(Database& db, std::string_view table) {
  Statement s = db.prepare("SELECT COUNT(*) FROM " + std::string(table));
  s.step();
  return static_cast<std::size_t>(s.integer(0));
}

}  // namespace store_internal

std::int64_t CacheStore::total_bytes() {
  return locked([&] { return store_internal::payload_total(*db_); });
}

std::vector<ArchTotals> CacheStore::totals_by_arch() {
  return locked([&] {
    std::vector<ArchTotals> out;
    Statement s = db_->prepare(std::string("SELECT arch, COUNT(*), SUM(") + kPayloadBytes +
                               "), SUM(hits) FROM entries GROUP BY arch ORDER BY arch");
    while (s.step()) out.push_back({s.text(0), s.integer(1), s.integer(2), s.integer(3)});
    return out;
  });
}

std::vector<EntryInfo> CacheStore::list(const std::string& arch) {
  return locked([&] {
    std::vector<EntryInfo> out;
    Statement s = db_->prepare(
        std::string("SELECT key, arch, source_name, backend, compiler_version, plugin_version, ") +
        kPayloadBytes +
        ", created_us, last_used_us, hits FROM entries WHERE ?1 = '' OR arch = ?1 "
        "ORDER BY last_used_us DESC, key");
    s.bind(1, arch);
    while (s.step()) out.push_back(read_info(s));
    return out;
  });
}

void CacheStore::for_each(const std::function<void(CacheEntry&&)>& fn, const std::string& arch) {
  // Keys first, then one entry at a time: memory stays at one code object and
  // fn may call back into this store.
  std::vector<std::string> keys = locked([&] {
    std::vector<std::string> out;
    Statement s = db_->prepare("SELECT key FROM entries WHERE ?1 = '' OR arch = ?1 ORDER BY key");
    s.bind(1, arch);
    while (s.step()) {
      if (!writable() && out.size() >= kMaxUntrustedEntries)
        throw SqliteError(SQLITE_TOOBIG, path_ + " holds more than " +
                                             std::to_string(kMaxUntrustedEntries) + " entries");
      out.push_back(s.text(0));
    }
    return out;
  });
  for (const auto& key : keys)
    if (auto entry = find(key)) fn(std::move(*entry));
}

}  // namespace hipacm::cache
