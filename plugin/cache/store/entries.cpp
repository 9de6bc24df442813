// SPDX-License-Identifier: MIT
// entries.cpp - one entry at a time: the lookup and its row decoder, the insert, the removal.
#include <string>

#include "plugin/cache/store/name_list.h"
#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {
namespace {

using store_internal::kEntryColumns;
using store_internal::ResetOnExit;

CacheEntry read_entry(const Statement& s) {
  CacheEntry e;
  // The size column (9) is skipped: e.info.size is measured below.
  e.info = {store_internal::read_labels(s), 0, s.integer(10), s.integer(11), s.integer(12)};
  e.lowered_names = split_names(s.text(6));
  e.expected_kernels = split_names(s.text(7));
  e.log = s.text(8);
  e.checksum = s.text(13);
  e.code = s.blob(14);
  // Measured from what was read, code object included; the row's own
  // `size` column is never believed.
  e.info.size = payload_size(e);
  return e;
}

}  // namespace

namespace store_internal {

void delete_key(Database& db, std::string_view table, const std::string& key) {
  db.prepare("DELETE FROM " + std::string(table) + " WHERE key=?").bind(1, key).step();
}

}  // namespace store_internal

std::optional<CacheEntry> CacheStore::find(const std::string& key) {
  return locked([&]() -> std::optional<CacheEntry> {
    if (!find_)
      find_.emplace(db_->handle(),
                    std::string("SELECT ") + kEntryColumns + " FROM entries WHERE key=?");
    ResetOnExit reset{*find_};
    find_->bind(1, key);
    if (!find_->step()) return std::nullopt;
    return read_entry(*find_);
  });
}

void CacheStore::put(const CacheEntry& e) {
  locked([&] {
    flush_hits_locked();
    if (!put_)
      put_.emplace(db_->handle(),
                   std::string("INSERT INTO entries(") + kEntryColumns +
                       ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                       "ON CONFLICT(key) DO UPDATE SET arch=excluded.arch, "
                       "source_name=excluded.source_name, backend=excluded.backend, "
                       "compiler_version=excluded.compiler_version, "
                       "plugin_version=excluded.plugin_version, "
                       "lowered_names=excluded.lowered_names, "
                       "expected_kernels=excluded.expected_kernels, log=excluded.log, "
                       "size=excluded.size, last_used_us=excluded.last_used_us, "
                       "checksum=excluded.checksum, code=excluded.code");
    Transaction tx(*db_);
    {
      ResetOnExit reset{*put_};
      put_->bind(1, e.info.key)
          .bind(2, e.info.arch)
          .bind(3, e.info.source_name)
          .bind(4, e.info.backend)
          .bind(5, e.info.compiler_version)
          .bind(6, e.info.plugin_version)
          .bind(7, join_names(e.lowered_names))
          .bind(8, join_names(e.expected_kernels))
          .bind(9, e.log)
          .bind(10, e.info.size)
          .bind(11, e.info.created_us)
          .bind(12, e.info.last_used_us)
          .bind(13, e.info.hits)
          .bind(14, e.checksum)
          .bind_blob(15, e.code.data(), e.code.size());
      put_->step();
    }
    // The success disproves a stored failure under the same key.
    store_internal::delete_key(*db_, "failures", e.info.key);
    tx.commit();
  });
}

void CacheStore::remove(const std::string& key) {
  locked([&] {
    Transaction tx(*db_);
    store_internal::delete_key(*db_, "entries", key);
    tx.commit();
  });
}

}  // namespace hipacm::cache
