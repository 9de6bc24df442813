// SPDX-License-Identifier: MIT
// library_fact_store_test.cpp - the cache database as the memo of library facts: policies, clear,
// export, and databases that predate the facts table.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <string>

#include "cache_test_support.h"
#include "plugin/cache/cache_admin.h"
#include "plugin/cache/caching_compiler.h"
#include "plugin/cache/library_fact_memo.h"
#include "plugin/cache/store/store.h"

namespace hipacm::cache_test {
namespace {

using cache::CacheSettings;
using cache::CacheStore;
using cache::Policy;

CacheSettings settings_for(const TempDir& dir, Policy policy) {
  CacheSettings s;
  s.policy = policy;
  s.user_db = dir.db();
  return s;
}

TEST(CacheLibraryFacts, ReadWriteRemembersAndRecalls) {
  TempDir dir;
  auto memo = cache::library_fact_memo(settings_for(dir, Policy::kReadWrite));
  ASSERT_TRUE(memo);
  EXPECT_FALSE(memo->recall("k"));
  memo->remember("k", "v1");
  EXPECT_EQ(memo->recall("k"), "v1");
  memo->remember("k", "v2");
  EXPECT_EQ(memo->recall("k"), "v2");
  // Another connection, as the next process would open it.
  auto other = CacheStore::open(dir.db(), CacheStore::Access::kReadOnly);
  EXPECT_EQ(other->find_fact("k"), "v2");
  EXPECT_EQ(other->count_facts(), 1u);
}

TEST(CacheLibraryFacts, ReadPolicyRecallsButNeverWrites) {
  TempDir dir;
  cache::library_fact_memo(settings_for(dir, Policy::kReadWrite))->remember("k", "v");
  auto memo = cache::library_fact_memo(settings_for(dir, Policy::kRead));
  ASSERT_TRUE(memo);
  EXPECT_EQ(memo->recall("k"), "v");
  memo->remember("k2", "v2");
  EXPECT_FALSE(memo->recall("k2"));
  EXPECT_EQ(CacheStore::open(dir.db(), CacheStore::Access::kReadOnly)->count_facts(), 1u);
}

TEST(CacheLibraryFacts, OffOrNoUserLayerGivesNoMemo) {
  TempDir dir;
  EXPECT_FALSE(cache::library_fact_memo(settings_for(dir, Policy::kOff)));
  CacheSettings system_only;
  system_only.policy = Policy::kReadWrite;
  system_only.system_db = dir.db();
  EXPECT_FALSE(cache::library_fact_memo(system_only));
}

TEST(CacheLibraryFacts, AnUnusableLocationRecallsNothingAndThrowsNothing) {
  TempDir dir;
  const std::string blocker = dir.path() + "/file";
  std::ofstream(blocker) << "not a directory";
  CacheSettings s;
  s.policy = Policy::kReadWrite;
  s.user_db = blocker + "/cache/" + cache::kDatabaseFileName;
  auto memo = cache::library_fact_memo(s);
  ASSERT_TRUE(memo);
  memo->remember("k", "v");
  EXPECT_FALSE(memo->recall("k"));
}

TEST(CacheLibraryFacts, ClearForgetsThemAndExportLeavesThemBehind) {
  TempDir dir;
  auto admin = cache::CacheAdmin::open(dir.db());
  auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
  store->put_fact("k", "v");
  TempDir out;
  admin.export_to(out.path() + "/export.sqlite3", "");
  EXPECT_EQ(CacheStore::open(out.path() + "/export.sqlite3", CacheStore::Access::kReadOnly)
                ->count_facts(),
            0u);
  EXPECT_EQ(store->count_facts(), 1u);
  admin.clear();
  EXPECT_EQ(store->count_facts(), 0u);
  EXPECT_FALSE(store->find_fact("k"));
}

TEST(CacheLibraryFacts, ADatabaseWithoutTheTableMissesReadOnlyAndGainsItReadWrite) {
  TempDir dir;
  CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.db().c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "DROP TABLE library_facts", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto read = cache::library_fact_memo(settings_for(dir, Policy::kRead));
  EXPECT_FALSE(read->recall("k"));
  auto write = cache::library_fact_memo(settings_for(dir, Policy::kReadWrite));
  write->remember("k", "v");
  EXPECT_EQ(write->recall("k"), "v");
}

}  // namespace
}  // namespace hipacm::cache_test
