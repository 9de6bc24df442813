// SPDX-License-Identifier: MIT
// served_entry_test.cpp - what a hit serves is derived from the request: raw options in the key,
// forged lowered names, code objects and sizes never served or trusted.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/store/store.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

// Rewrites every entry of the database in `dir` with `forge` and a checksum
// that matches again: what anyone who can write a cache file can do.
template <typename Forge>
void forge_entries(const TempDir& dir, Forge forge) {
  auto store = cache::CacheStore::open(dir.db(), cache::CacheStore::Access::kReadWrite);
  std::vector<cache::CacheEntry> entries;
  store->for_each([&](cache::CacheEntry&& e) { entries.push_back(std::move(e)); });
  ASSERT_FALSE(entries.empty());
  for (auto& e : entries) {
    forge(e);
    e.checksum = cache::entry_checksum(e);
    store->put(e);
  }
}

CompileSpec templated_pair() {
  CompileSpec spec;
  spec.source = kTemplatedSource;
  spec.name_expressions = {"scale<float>", "scale<double>"};
  return spec;
}

class Trust05_RawOptions : public CacheEnvironment {};

TEST_F(Trust05_RawOptions, PaddedOptionsAreNotServedTheCleanOnesEntry) {
  CompileSpec clean, padded;
  clean.options = {"-DX=1"};
  padded.options = {" -DX=1", ""};
  CompileSpec uncached = padded;
  uncached.policy = HIPACM_CACHE_OFF;
  const Outcome expected = compile_in_mode("", uncached);

  TempDir dir;
  ASSERT_EQ(compile_in_mode(dir.path(), clean).status, HIPACM_SUCCESS);
  ASSERT_TRUE(compile_in_mode(dir.path(), clean).from_cache);
  CountingFactory counter;
  const Outcome got = compile_in_mode(dir.path(), padded);
  EXPECT_FALSE(got.from_cache);
  EXPECT_EQ(counter.compiles.load(), 1);
  EXPECT_EQ(got.status, expected.status);
  EXPECT_EQ(got.code.empty(), expected.code.empty());
}

class Trust06_ForgedEntry : public CacheEnvironment {};

TEST_F(Trust06_ForgedEntry, SwappedLoweredNamesInTheStoreAreNeverServed) {
  TempDir dir;
  const Outcome real = compile_in_mode(dir.path(), templated_pair());
  ASSERT_EQ(real.status, HIPACM_SUCCESS);
  ASSERT_EQ(real.lowered_names.size(), 2u);
  forge_entries(dir, [](cache::CacheEntry& e) {
    std::swap(e.lowered_names[0], e.lowered_names[1]);
    e.expected_kernels = e.lowered_names;
  });
  Outcome again;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(dir.path(), templated_pair(), &again));
  EXPECT_EQ(again.lowered_names, real.lowered_names);
}

TEST_F(Trust06_ForgedEntry, SwappedLoweredNamesThroughAnImportAreNeverServed) {
  TempDir forged_dir, files, target;
  const Outcome real = compile_in_mode(forged_dir.path(), templated_pair());
  ASSERT_EQ(real.status, HIPACM_SUCCESS);
  forge_entries(forged_dir,
                [](cache::CacheEntry& e) { std::swap(e.lowered_names[0], e.lowered_names[1]); });
  const std::string file = files.path() + "/forged.sqlite3";
  ASSERT_EQ(cache::CacheAdmin::open(forged_dir.db()).export_to(file), 1u);
  // Without the request an import can only check that both names exist.
  cache::CacheAdmin::open(target.db()).import_from(file);
  Outcome served;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(target.path(), templated_pair(), &served));
  EXPECT_EQ(served.lowered_names, real.lowered_names);
}

TEST_F(Trust06_ForgedEntry, SwappedLoweredNamesInTheSystemCacheAreNeverServed) {
  TempDir forged_dir, files, user;
  ASSERT_EQ(compile_in_mode(forged_dir.path(), templated_pair()).status, HIPACM_SUCCESS);
  forge_entries(forged_dir,
                [](cache::CacheEntry& e) { std::swap(e.lowered_names[0], e.lowered_names[1]); });
  const std::string file = files.path() + "/system.sqlite3";
  ASSERT_EQ(cache::CacheAdmin::open(forged_dir.db()).export_to(file), 1u);
  setenv("HIPACM_SYSTEM_CACHE", file.c_str(), 1);
  Outcome served;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(user.path(), templated_pair(), &served));
}

// No name expressions: an entry holding another program's code object (same
// arch, valid checksum) must not answer a request whose source defines
// `vadd`, the kernel the host will look up.
TEST_F(Trust06_ForgedEntry, AnotherProgramsObjectIsNeverServedForASourceWithoutNameExpressions) {
  TempDir other_dir, dir;
  CompileSpec other;
  other.source = kernel_source("not_vadd");
  const Outcome impostor = compile_in_mode(other_dir.path(), other);
  ASSERT_EQ(impostor.status, HIPACM_SUCCESS);
  const Outcome real = compile_in_mode(dir.path());
  ASSERT_EQ(real.status, HIPACM_SUCCESS);
  forge_entries(dir, [&](cache::CacheEntry& e) { e.code = impostor.code; });
  SCOPED_TRACE("an entry holding another program's code object");
  Outcome again;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(dir.path(), {}, &again));
  EXPECT_EQ(again.code, real.code);
}

TEST_F(Trust06_ForgedEntry, ACodeObjectWithoutTheRequestedKernelIsNeverServed) {
  TempDir other, dir;
  ASSERT_EQ(compile_in_mode(other.path()).status, HIPACM_SUCCESS);  // vadd, extern "C"
  std::vector<std::uint8_t> vadd_code;
  cache::CacheStore::open(other.db(), cache::CacheStore::Access::kReadOnly)
      ->for_each([&](cache::CacheEntry&& e) { vadd_code = e.code; });
  ASSERT_FALSE(vadd_code.empty());

  CompileSpec spec;
  spec.source = kTemplatedSource;
  spec.name_expressions = {"scale<float>"};
  ASSERT_EQ(compile_in_mode(dir.path(), spec).status, HIPACM_SUCCESS);
  // The entry no longer lists what it must contain; the request still says.
  forge_entries(dir, [&](cache::CacheEntry& e) {
    e.code = vadd_code;
    e.expected_kernels.clear();
  });
  Outcome again;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(dir.path(), spec, &again));
  EXPECT_NE(again.code, vadd_code);
}

class Trust06_EntrySize : public CacheEnvironment {};

TEST_F(Trust06_EntrySize, AForgedSizeDoesNotEvictOthers) {
  TempDir dir;
  for (const char* name : {"first", "second"}) {
    CompileSpec spec;
    spec.source = kernel_source(name);
    ASSERT_EQ(compile_in_mode(dir.path(), spec).status, HIPACM_SUCCESS);
  }
  {
    auto store = cache::CacheStore::open(dir.db(), cache::CacheStore::Access::kReadWrite);
    // The newer of the two claims a petabyte; the older one sorts first for
    // eviction, so a trusted size would evict both.
    store->execute_for_testing(
        "UPDATE entries SET size = 1000000000000000 WHERE last_used_us = "
        "(SELECT MAX(last_used_us) FROM entries)");
  }
  setenv("HIPACM_CACHE_MAX_BYTES", "1073741824", 1);
  CompileSpec third;
  third.source = kernel_source("third");
  ASSERT_EQ(compile_in_mode(dir.path(), third).status, HIPACM_SUCCESS);

  auto admin = cache::CacheAdmin::open(dir.db());
  EXPECT_EQ(admin.list().size(), 3u);
  const auto stats = admin.stats();
  EXPECT_LT(stats.total_bytes, 1 << 20);
  for (const auto& info : admin.list()) EXPECT_LT(info.size, 1 << 20);
}

}  // namespace
}  // namespace hipacm::cache_test
