// SPDX-License-Identifier: MIT
// library_fact_memo.cpp - the user cache database as a backend of the remembered-facts store,
// and the one choice of the backend that serves a process.
#include "plugin/cache/library_fact_memo.h"

#include "hip_backend/machine/runtime_fact_memo.h"
#include "plugin/cache/registry.h"

namespace hipacm::cache {
namespace {

/// The library_facts table of the database at `db_path`; the key and value are kept as given.
class StoreFactMemo final : public backend::FactMemoBackend {
 public:
  StoreFactMemo(std::string db_path, CacheStore::Access access)
      : db_path_(std::move(db_path)), access_(access) {}

 protected:
  std::optional<std::string> load(const std::string& key) override {
    if (auto db = shared_store(db_path_, access_)) return db->find_fact(key);
    return std::nullopt;
  }

  void store(const std::string& key, const std::string& value) override {
    if (auto db = shared_store(db_path_, access_)) db->put_fact(key, value);
  }

  bool writable() const noexcept override { return access_ == CacheStore::Access::kReadWrite; }

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

std::shared_ptr<backend::LibraryFactMemo> fact_memo_for(const CacheSettings& settings) {
  if (std::shared_ptr<backend::LibraryFactMemo> memo = library_fact_memo(settings)) return memo;
  return backend::runtime_fact_memo();
}

}  // namespace hipacm::cache
