// SPDX-License-Identifier: MIT
// library_fact_memo.cpp - the user cache database as the backend's LibraryFactMemo.
#include "plugin/cache/library_fact_memo.h"

#include "plugin/cache/registry.h"

namespace hipacm::cache {
namespace {

class StoreFactMemo final : public backend::LibraryFactMemo {
 public:
  StoreFactMemo(std::string db_path, CacheStore::Access access)
      : db_path_(std::move(db_path)), access_(access) {}

  std::optional<std::string> recall(const std::string& key) noexcept override {
    try {
      if (auto store = shared_store(db_path_, access_)) return store->find_fact(key);
    } catch (...) {
      // A cache that cannot answer only means reading the library again.
    }
    return std::nullopt;
  }

  void remember(const std::string& key, const std::string& value) noexcept override {
    if (access_ != CacheStore::Access::kReadWrite) return;
    try {
      if (auto store = shared_store(db_path_, access_)) store->put_fact(key, value);
    } catch (...) {
      // Remembering is an optimisation; a full or locked cache skips it.
    }
  }

 private:
  const std::string db_path_;
  const CacheStore::Access access_;
};

}  // namespace

std::shared_ptr<backend::LibraryFactMemo> library_fact_memo(const CacheSettings& settings) {
  if (settings.policy == Policy::kOff || settings.user_db.empty()) return nullptr;
  return std::make_shared<StoreFactMemo>(settings.user_db, settings.policy == Policy::kReadWrite
                                                               ? CacheStore::Access::kReadWrite
                                                               : CacheStore::Access::kReadOnly);
}

}  // namespace hipacm::cache
