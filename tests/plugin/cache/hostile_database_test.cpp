// SPDX-License-Identifier: MIT
// hostile_database_test.cpp - crafted SQLite files as imports and as the system cache: refused
// quickly with a reason, never a hang or unbounded memory.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "plugin/cache/cache_admin.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

constexpr const char* kMeta =
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta VALUES('schema_version', '1');";

// Every column an entries row has, as a SELECT list over a row source `n`.
constexpr const char* kRowColumns =
    "printf('%064x', i) AS key, 'gfx90a' AS arch, 's' AS source_name, 'hiprtc' AS backend, "
    "'v' AS compiler_version, 'p' AS plugin_version, '' AS lowered_names, "
    "'' AS expected_kernels, '' AS log, 1 AS size, 0 AS created_us, 0 AS last_used_us, "
    "0 AS hits, '' AS checksum";

// A database built with the sqlite3 C API from `sql`.
std::string make_database(const TempDir& dir, const std::string& name, const std::string& sql) {
  const std::string path = dir.path() + "/" + name;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
  return path;
}

struct Hostile {
  const char* name;
  std::string sql;
  const char* reason;  ///< part of the refusal's message
};

std::vector<Hostile> hostile_databases() {
  const std::string columns = kRowColumns;
  return {
      {"view_of_huge_blobs",
       std::string(kMeta) +
           "CREATE VIEW entries AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
           "WHERE i < 100) SELECT " +
           columns + ", zeroblob(900000000) AS code FROM n;",
       "view"},
      {"view_of_endless_rows",
       std::string(kMeta) +
           "CREATE VIEW entries AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
           "SELECT " +
           columns + ", randomblob(16) AS code FROM n;",
       "view"},
      {"trigger",
       std::string(kMeta) + "CREATE TABLE entries(key TEXT PRIMARY KEY, arch TEXT, source_name "
                            "TEXT, backend TEXT, compiler_version TEXT, plugin_version TEXT, "
                            "lowered_names TEXT, expected_kernels TEXT, log TEXT, size INTEGER, "
                            "created_us INTEGER, last_used_us INTEGER, hits INTEGER, checksum "
                            "TEXT, code BLOB);"
                            "CREATE TABLE other(x);"
                            "CREATE TRIGGER t AFTER INSERT ON other BEGIN SELECT 1; END;",
       "trigger"},
      {"wrong_columns",
       std::string(kMeta) + "CREATE TABLE entries(key TEXT PRIMARY KEY, code BLOB);", "no column"},
      {"generated_code_column",
       std::string(kMeta) + "CREATE TABLE entries(key TEXT PRIMARY KEY, arch TEXT, source_name "
                            "TEXT, backend TEXT, compiler_version TEXT, plugin_version TEXT, "
                            "lowered_names TEXT, expected_kernels TEXT, log TEXT, size INTEGER, "
                            "created_us INTEGER, last_used_us INTEGER, hits INTEGER, checksum "
                            "TEXT, code BLOB GENERATED ALWAYS AS (zeroblob(900000000)) VIRTUAL);"
                            "INSERT INTO entries(key) VALUES('k');",
       "generated"},
  };
}

class Trust07_HostileDatabase : public CacheEnvironment {};

TEST_F(Trust07_HostileDatabase, ImportRefusesEachWithItsReasonAndStoresNothing) {
  TempDir files;
  for (const Hostile& h : hostile_databases()) {
    SCOPED_TRACE(h.name);
    const std::string file = make_database(files, std::string(h.name) + ".sqlite3", h.sql);
    TempDir target;
    auto admin = cache::CacheAdmin::open(target.db());
    expect_refused([&] { admin.import_from(file); }, h.reason,
                   std::string("the import of ") + h.name);
    EXPECT_EQ(admin.stats().entries, 0);
  }
}

TEST_F(Trust07_HostileDatabase, AsTheSystemCacheASubmitStillCompiles) {
  TempDir files;
  for (const Hostile& h : hostile_databases()) {
    SCOPED_TRACE(h.name);
    const std::string file = make_database(files, std::string(h.name) + ".sqlite3", h.sql);
    setenv("HIPACM_SYSTEM_CACHE", file.c_str(), 1);
    TempDir user;
    CountingFactory counter;
    const Outcome out = compile_in_mode(user.path());
    EXPECT_EQ(out.status, HIPACM_SUCCESS);
    EXPECT_FALSE(out.from_cache);
    EXPECT_EQ(counter.compiles.load(), 1);
  }
}

// Fills `source` with three compiled kernels and exports them to `file`.
void export_three_kernels(const TempDir& source, const std::string& file) {
  for (const char* name : {"a", "b", "c"}) {
    CompileSpec spec;
    spec.source = kernel_source(name);
    ASSERT_EQ(compile_in_mode(source.path(), spec).status, HIPACM_SUCCESS);
  }
  ASSERT_EQ(cache::CacheAdmin::open(source.db()).export_to(file), 3u);
}

// Scribbles over the first eight bytes at `offset`.
void damage_at(const std::string& file, std::uintmax_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
}

TEST_F(Trust07_HostileDatabase, ADamagedImportFailsQuickCheckBeforeAnyEntryIsRead) {
  TempDir source, files, target;
  const std::string file = files.path() + "/damaged.sqlite3";
  export_three_kernels(source, file);
  if (HasFatalFailure()) return;
  // Scribble over the first bytes of a page in the middle of the file (a
  // code object's overflow page, or a b-tree page): the schema still reads,
  // only a walk over the b-trees notices.
  damage_at(file, std::filesystem::file_size(file) / 2 / 4096 * 4096);
  auto admin = cache::CacheAdmin::open(target.db());
  // Whatever page the damage lands on (a table's root page stops the check itself), it is the
  // quick_check that refuses the file, before any entry is read.
  expect_refused([&] { admin.import_from(file); }, "quick_check", "the import of a damaged file");
  EXPECT_EQ(admin.stats().entries, 0);
}

TEST_F(Trust07_HostileDatabase, DamageOnAnyPageIsRefusedAsDamagedOrImportsNothingWrong) {
  TempDir source, files;
  const std::string clean = files.path() + "/clean.sqlite3";
  export_three_kernels(source, clean);
  if (HasFatalFailure()) return;
  const auto pages = std::filesystem::file_size(clean) / 4096;
  ASSERT_GE(pages, 3u);
  int refused = 0;
  // Page 1 (the header and the schema) is left alone: other tests damage it. Opening the file
  // reads some pages, quick_check the rest; either way the refusal says the file is damaged.
  for (std::uintmax_t page = 1; page < pages; ++page) {
    const std::string file = files.path() + "/damaged-" + std::to_string(page) + ".sqlite3";
    std::filesystem::copy_file(clean, file);
    damage_at(file, page * 4096);
    TempDir target;
    auto admin = cache::CacheAdmin::open(target.db());
    try {
      admin.import_from(file);
    } catch (const std::runtime_error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("the file is damaged"), std::string::npos)
          << "page " << page << ": " << e.what();
      EXPECT_EQ(admin.stats().entries, 0) << "page " << page;
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace hipacm::cache_test
