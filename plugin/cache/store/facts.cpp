// SPDX-License-Identifier: MIT
// facts.cpp - the library facts table: what this machine's compiler libraries were found to be.
#include <string>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {

std::optional<std::string> CacheStore::find_fact(const std::string& key) {
  return locked([&]() -> std::optional<std::string> {
    Statement s = db_->prepare("SELECT value FROM library_facts WHERE key=?");
    s.bind(1, key);
    if (!s.step()) return std::nullopt;
    return s.text(0);
  });
}

void CacheStore::put_fact(const std::string& key, const std::string& value) {
  if (access_ != Access::kReadWrite) return;
  locked([&] {
    Transaction tx(*db_);
    db_->prepare("INSERT OR REPLACE INTO library_facts(key, value, recorded_us) VALUES(?, ?, ?)")
        .bind(1, key)
        .bind(2, value)
        .bind(3, now_us())
        .step();
    tx.commit();
  });
}

std::size_t CacheStore::count_facts() {
  return locked([&] { return store_internal::count_rows(*db_, "library_facts"); });
}

}  // namespace hipacm::cache
