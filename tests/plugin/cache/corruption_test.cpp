// SPDX-License-Identifier: MIT
// corruption_test.cpp - damaged databases and entries, unusable locations and full disks never fail
// a compile.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/registry.h"
#include "plugin/cache/store/store.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

namespace fs = std::filesystem;

class CacheCorruption : public CacheEnvironment {
 protected:
  // A database holding two real entries, written as one self-contained file.
  std::string seeded_database() {
    const std::string file = scratch_.path() + "/seed.sqlite3";
    if (!fs::exists(file)) {
      EXPECT_EQ(compile_in_mode(scratch_.path()).status, HIPACM_SUCCESS);
      CompileSpec second;
      second.source = kernel_source("second");
      EXPECT_EQ(compile_in_mode(scratch_.path(), second).status, HIPACM_SUCCESS);
      EXPECT_EQ(cache::CacheAdmin::open(scratch_.db()).export_to(file), 2u);
    }
    return file;
  }

  // The cache works again: a compile is stored and the next one hits.
  void expect_recovered(const TempDir& dir) {
    CompileSpec fresh;
    fresh.source = kernel_source("after_recovery");
    const Outcome first = compile_in_mode(dir.path(), fresh);
    ASSERT_EQ(first.status, HIPACM_SUCCESS);
    const Outcome again = compile_in_mode(dir.path(), fresh);
    ASSERT_EQ(again.status, HIPACM_SUCCESS);
    EXPECT_TRUE(again.from_cache);
    EXPECT_EQ(again.code, first.code);
    const auto report = cache::CacheAdmin::open(dir.db()).verify(false);
    EXPECT_TRUE(report.bad.empty());
  }

  static bool moved_aside_exists(const TempDir& dir) {
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.path().filename().string().find(".corrupt-") != std::string::npos) return true;
    return false;
  }

  TempDir scratch_;
};

TEST_F(CacheCorruption, TruncatedDatabase) {
  const std::string seed = seeded_database();
  TempDir dir;
  fs::copy_file(seed, dir.db());
  fs::resize_file(dir.db(), fs::file_size(dir.db()) / 2);
  const Outcome outcome = compile_in_mode(dir.path());
  ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
  EXPECT_FALSE(outcome.code.empty());
  EXPECT_TRUE(moved_aside_exists(dir));
  expect_recovered(dir);
}

TEST_F(CacheCorruption, RandomBytes) {
  TempDir dir;
  {
    std::ofstream out(dir.db(), std::ios::binary);
    std::mt19937 random(42);
    for (int i = 0; i < 65536; ++i) out.put(static_cast<char>(random()));
  }
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  EXPECT_TRUE(moved_aside_exists(dir));
  expect_recovered(dir);
}

TEST_F(CacheCorruption, ZeroLengthFile) {
  TempDir dir;
  { std::ofstream out(dir.db(), std::ios::binary); }
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  expect_recovered(dir);
}

TEST_F(CacheCorruption, FlippedByteInsideABlobIsNeverServed) {
  TempDir dir;
  CountingFactory counter;
  const Outcome original = compile_in_mode(dir.path());
  ASSERT_EQ(original.status, HIPACM_SUCCESS);
  {
    auto store = cache::CacheStore::open(dir.db(), cache::CacheStore::Access::kReadWrite);
    auto entries = store->list();
    ASSERT_EQ(entries.size(), 1u);
    auto entry = store->find(entries[0].key);
    ASSERT_TRUE(entry);
    entry->code[entry->code.size() / 2] ^= 0x01;
    store->put(*entry);  // the stored checksum is the original's
  }
  const Outcome outcome = compile_in_mode(dir.path());
  ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
  EXPECT_FALSE(outcome.from_cache);
  EXPECT_EQ(outcome.code, original.code);
  EXPECT_EQ(counter.compiles.load(), 2);
  const Outcome healed = compile_in_mode(dir.path());
  EXPECT_TRUE(healed.from_cache);
  EXPECT_EQ(healed.code, original.code);
}

TEST_F(CacheCorruption, WrongArchBlobWithValidChecksumIsNeverServed) {
  TempDir dir;
  TempDir other;
  CountingFactory counter;
  const Outcome original = compile_in_mode(dir.path());
  ASSERT_EQ(original.status, HIPACM_SUCCESS);
  CompileSpec gfx1030;
  gfx1030.arch = kOtherArch;
  const Outcome foreign = compile_in_mode(other.path(), gfx1030);
  ASSERT_EQ(foreign.status, HIPACM_SUCCESS);
  {
    auto store = cache::CacheStore::open(dir.db(), cache::CacheStore::Access::kReadWrite);
    auto entry = store->find(store->list()[0].key);
    ASSERT_TRUE(entry);
    entry->code = foreign.code;
    entry->checksum = cache::entry_checksum(*entry);  // only the ELF check can tell
    store->put(*entry);
    const Expected<void> valid = cache::validate_entry(*entry, kArch);
    EXPECT_FALSE(valid);
    const std::string why = valid ? std::string() : valid.failure().message;
    EXPECT_NE(why.find("code object"), std::string::npos) << why;
  }
  const Outcome outcome = compile_in_mode(dir.path());
  ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
  EXPECT_FALSE(outcome.from_cache);
  EXPECT_EQ(outcome.code, original.code);
  EXPECT_EQ(counter.compiles.load(), 3);
}

TEST_F(CacheCorruption, ReadOnlyDirectoryDegradesToCompiling) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  TempDir dir;
  const std::string locked = dir.path() + "/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0555), 0);
  CountingFactory counter;
  for (int round = 0; round < 2; ++round) {
    const Outcome outcome = compile_in_mode(locked);
    ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
    EXPECT_FALSE(outcome.from_cache);
  }
  EXPECT_EQ(counter.compiles.load(), 2);
  EXPECT_FALSE(fs::exists(locked + "/" + cache::kDatabaseFileName));
  chmod(locked.c_str(), 0755);
}

// Root ignores permission bits, so these locations are unusable for anyone:
// a regular file where the directory should be, and a path inside /proc.
TEST_F(CacheCorruption, UnusableLocationDegradesToCompiling) {
  TempDir dir;
  const std::string file = dir.path() + "/not-a-directory";
  { std::ofstream out(file); }
  CountingFactory counter;
  for (const std::string& location : {file, std::string("/proc/hipacm-cache-test")}) {
    for (int round = 0; round < 2; ++round) {
      const Outcome outcome = compile_in_mode(location);
      ASSERT_EQ(outcome.enter_status, HIPACM_SUCCESS);
      ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
      EXPECT_FALSE(outcome.from_cache);
    }
  }
  EXPECT_EQ(counter.compiles.load(), 4);
}

// Opening a FIFO as a database would block until a writer came: the host would hang. A FIFO, a
// directory or a device where the user or the system database should be is refused at once, and
// the compile goes on.
TEST_F(CacheCorruption, ADatabaseThatIsNotARegularFileIsRefusedWithoutBlocking) {
  TempDir fifo_dir, dir_dir, system_fifo;
  ASSERT_EQ(::mkfifo(fifo_dir.db().c_str(), 0600), 0);
  fs::create_directory(dir_dir.db());
  const std::string system_db = system_fifo.path() + "/system.sqlite3";
  ASSERT_EQ(::mkfifo(system_db.c_str(), 0600), 0);
  CountingFactory counter;
  for (const std::string& location : {fifo_dir.path(), dir_dir.path()}) {
    const Outcome outcome = compile_in_mode(location);
    ASSERT_EQ(outcome.enter_status, HIPACM_SUCCESS) << location;
    ASSERT_EQ(outcome.status, HIPACM_SUCCESS) << location;
    EXPECT_FALSE(outcome.from_cache);
  }
  for (const std::string& system : {system_db, std::string("/dev/null")}) {
    setenv("HIPACM_SYSTEM_CACHE", system.c_str(), 1);
    TempDir user_dir;
    const Outcome outcome = compile_in_mode(user_dir.path());
    ASSERT_EQ(outcome.status, HIPACM_SUCCESS) << system;
    EXPECT_FALSE(outcome.from_cache);
  }
  EXPECT_EQ(counter.compiles.load(), 4);
  for (const std::string& path : {fifo_dir.db(), dir_dir.db(), system_db}) {
    EXPECT_THROW(cache::CacheAdmin::inspect(path), std::runtime_error) << path;
    EXPECT_THROW(cache::CacheAdmin::open_read_only(path), std::runtime_error) << path;
  }
}

TEST_F(CacheCorruption, MissingParentIsCreated) {
  TempDir dir;
  const std::string nested = dir.path() + "/a/b/c";
  ASSERT_EQ(compile_in_mode(nested).status, HIPACM_SUCCESS);
  EXPECT_TRUE(compile_in_mode(nested).from_cache);
}

TEST_F(CacheCorruption, FullDiskDropsTheStoreButNotTheCompile) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  auto store = cache::shared_store(dir.db(), cache::CacheStore::Access::kReadWrite);
  ASSERT_TRUE(store);
  // SQLite caps the file at its current page count: the next insert is SQLITE_FULL.
  store->execute_for_testing("PRAGMA max_page_count = 1");

  CompileSpec big;
  big.source = kernel_source("does_not_fit");
  const Outcome outcome = compile_in_mode(dir.path(), big);
  ASSERT_EQ(outcome.status, HIPACM_SUCCESS);
  EXPECT_FALSE(outcome.code.empty());
  EXPECT_EQ(cache::CacheAdmin::open(dir.db()).list().size(), 1u);
  EXPECT_TRUE(compile_in_mode(dir.path()).from_cache) << "existing entries still hit";

  store->execute_for_testing("PRAGMA max_page_count = 1073741823");
  ASSERT_EQ(compile_in_mode(dir.path(), big).status, HIPACM_SUCCESS);
  EXPECT_TRUE(compile_in_mode(dir.path(), big).from_cache);
  EXPECT_EQ(counter.compiles.load(), 3);
}

TEST_F(CacheCorruption, ForeignSqliteDatabaseIsMovedAside) {
  TempDir dir;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.db().c_str(), &db), SQLITE_OK);
    sqlite3_exec(db,
                 "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT);"
                 "INSERT INTO meta VALUES('schema_version','999');",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  EXPECT_TRUE(moved_aside_exists(dir));
  expect_recovered(dir);
}

}  // namespace
}  // namespace hipacm::cache_test
