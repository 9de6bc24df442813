// SPDX-License-Identifier: MIT
// export_import_test.cpp - export to one file, import into another cache, tampered entries
// rejected.
#include <gtest/gtest.h>

#include <set>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/store/store.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

class CacheTransfer : public CacheEnvironment {
 protected:
  void SetUp() override {
    CacheEnvironment::SetUp();
    CompileSpec amd, rdna, templated;
    rdna.arch = kOtherArch;
    templated.source = kTemplatedSource;
    templated.name_expressions = {"scale<float>"};
    for (const CompileSpec* spec : {&amd, &rdna, &templated})
      ASSERT_EQ(compile_in_mode(source_.path(), *spec).status, HIPACM_SUCCESS);
  }

  static std::set<std::pair<std::string, std::string>> keys_and_checksums(const std::string& db) {
    std::set<std::pair<std::string, std::string>> out;
    auto store = cache::CacheStore::open(db, cache::CacheStore::Access::kReadOnly);
    store->for_each([&](cache::CacheEntry&& e) { out.emplace(e.info.key, e.checksum); });
    return out;
  }

  TempDir source_;
  TempDir files_;
};

TEST_F(CacheTransfer, ExportThenImportIntoAnEmptyCacheGivesTheSameEntries) {
  const std::string file = files_.path() + "/all.sqlite3";
  EXPECT_EQ(cache::CacheAdmin::open(source_.db()).export_to(file), 3u);
  TempDir target;
  auto admin = cache::CacheAdmin::open(target.db());
  const auto report = admin.import_from(file);
  EXPECT_EQ(report.accepted, 3);
  EXPECT_EQ(report.duplicates, 0);
  EXPECT_TRUE(report.rejected.empty());
  EXPECT_EQ(keys_and_checksums(target.db()), keys_and_checksums(source_.db()));
  EXPECT_TRUE(admin.verify(false).bad.empty());

  const auto again = admin.import_from(file);
  EXPECT_EQ(again.accepted, 0);
  EXPECT_EQ(again.duplicates, 3);

  CountingFactory counter;
  const Outcome hit = compile_in_mode(target.path());
  EXPECT_TRUE(hit.from_cache);
  EXPECT_EQ(counter.compiles.load(), 0);
}

TEST_F(CacheTransfer, ExportFiltersByArch) {
  const std::string file = files_.path() + "/rdna.sqlite3";
  EXPECT_EQ(cache::CacheAdmin::open(source_.db()).export_to(file, kOtherArch), 1u);
  const auto entries = keys_and_checksums(file);
  ASSERT_EQ(entries.size(), 1u);
  auto store = cache::CacheStore::open(file, cache::CacheStore::Access::kReadOnly);
  EXPECT_EQ(store->list()[0].arch, kOtherArch);
  auto read_only = cache::CacheAdmin::open_read_only(file);
  EXPECT_EQ(read_only.stats().entries, 1);
  EXPECT_TRUE(read_only.verify(false).bad.empty());
  EXPECT_THROW(read_only.clear(), std::runtime_error);
  EXPECT_EQ(cache::CacheAdmin::open_read_only(file).stats().entries, 1);
}

TEST_F(CacheTransfer, ExportRefusesToOverwrite) {
  const std::string file = files_.path() + "/once.sqlite3";
  auto admin = cache::CacheAdmin::open(source_.db());
  admin.export_to(file);
  EXPECT_THROW(admin.export_to(file), std::runtime_error);
}

TEST_F(CacheTransfer, TamperedBlobIsRejectedAndReported) {
  const std::string file = files_.path() + "/tampered.sqlite3";
  cache::CacheAdmin::open(source_.db()).export_to(file);
  std::string tampered_key;
  {
    auto store = cache::CacheStore::open(file, cache::CacheStore::Access::kReadWrite);
    auto entry = store->find(store->list(kArch)[0].key);
    ASSERT_TRUE(entry);
    tampered_key = entry->info.key;
    entry->code[entry->code.size() / 3] ^= 0x40;
    store->put(*entry);
  }
  TempDir target;
  auto admin = cache::CacheAdmin::open(target.db());
  const auto report = admin.import_from(file);
  EXPECT_EQ(report.accepted, 2);
  ASSERT_EQ(report.rejected.size(), 1u);
  EXPECT_EQ(report.rejected[0].key, tampered_key);
  EXPECT_NE(report.rejected[0].reason.find("checksum"), std::string::npos);
  EXPECT_FALSE(admin.lookup(tampered_key).has_value());
}

TEST_F(CacheTransfer, VerifyFindsAndRemovesDamagedEntries) {
  std::string damaged_key;
  {
    auto store = cache::CacheStore::open(source_.db(), cache::CacheStore::Access::kReadWrite);
    auto entry = store->find(store->list(kOtherArch)[0].key);
    damaged_key = entry->info.key;
    entry->log += "tampered";
    store->put(*entry);
  }
  auto admin = cache::CacheAdmin::open(source_.db());
  auto report = admin.verify(true);
  EXPECT_EQ(report.checked, 3);
  ASSERT_EQ(report.bad.size(), 1u);
  EXPECT_EQ(report.bad[0].key, damaged_key);
  EXPECT_EQ(report.removed, 1);
  EXPECT_TRUE(admin.verify(false).bad.empty());
  EXPECT_EQ(admin.stats().entries, 2);
}

TEST_F(CacheTransfer, StatsAndLookup) {
  auto admin = cache::CacheAdmin::open(source_.db());
  const auto stats = admin.stats();
  EXPECT_EQ(stats.entries, 3);
  ASSERT_EQ(stats.by_arch.size(), 2u);
  EXPECT_EQ(stats.by_arch[0].arch, kOtherArch);  // sorted by name
  EXPECT_EQ(stats.by_arch[0].entries, 1);
  EXPECT_EQ(stats.by_arch[1].entries, 2);
  EXPECT_GT(stats.file_bytes, 0);
  const auto listed = admin.list();
  auto entry = admin.lookup(listed[0].key);
  ASSERT_TRUE(entry);
  EXPECT_FALSE(entry->code.empty());
  EXPECT_FALSE(admin.lookup("0000").has_value());
}

}  // namespace
}  // namespace hipacm::cache_test
