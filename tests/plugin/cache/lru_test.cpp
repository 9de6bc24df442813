// SPDX-License-Identifier: MIT
// lru_test.cpp - HIPACM_CACHE_MAX_BYTES is enforced by evicting least-recently-used entries.
#include <gtest/gtest.h>

#include <algorithm>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/store/location.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

class CacheLru : public CacheEnvironment {};

bool holds(const std::vector<cache::EntryInfo>& entries, const std::string& key) {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const cache::EntryInfo& e) { return e.key == key; });
}

TEST_F(CacheLru, EvictsLeastRecentlyUsedWithinTheBound) {
  TempDir dir;
  CountingFactory counter;
  CompileSpec first, second, third;
  first.source = kernel_source("lru_first");
  second.source = kernel_source("lru_second");
  third.source = kernel_source("lru_third");

  ASSERT_EQ(compile_in_mode(dir.path(), first).status, HIPACM_SUCCESS);
  auto listed = cache::CacheAdmin::open(dir.db()).list();
  ASSERT_EQ(listed.size(), 1u);
  const std::string first_key = listed[0].key;
  const std::int64_t entry_size = listed[0].size;
  const std::int64_t bound = entry_size * 5 / 2;  // room for two entries, not three
  setenv("HIPACM_CACHE_MAX_BYTES", std::to_string(bound).c_str(), 1);

  ASSERT_EQ(compile_in_mode(dir.path(), second).status, HIPACM_SUCCESS);
  listed = cache::CacheAdmin::open(dir.db()).list();
  ASSERT_EQ(listed.size(), 2u);
  const std::string second_key = listed[0].key == first_key ? listed[1].key : listed[0].key;
  // Using the first entry again makes the second one the least recently used.
  ASSERT_TRUE(compile_in_mode(dir.path(), first).from_cache);
  ASSERT_EQ(compile_in_mode(dir.path(), third).status, HIPACM_SUCCESS);

  auto admin = cache::CacheAdmin::open(dir.db());
  listed = admin.list();
  EXPECT_EQ(listed.size(), 2u);
  EXPECT_TRUE(holds(listed, first_key));
  EXPECT_FALSE(holds(listed, second_key));
  EXPECT_LE(admin.stats().total_bytes, bound);
  EXPECT_TRUE(compile_in_mode(dir.path(), first).from_cache);
  EXPECT_FALSE(compile_in_mode(dir.path(), second).from_cache);
}

TEST_F(CacheLru, AnEntryLargerThanTheBoundIsTheOnlyOneKept) {
  TempDir dir;
  CountingFactory counter;
  CompileSpec a, b;
  a.source = kernel_source("big_a");
  b.source = kernel_source("big_b");
  ASSERT_EQ(compile_in_mode(dir.path(), a).status, HIPACM_SUCCESS);
  setenv("HIPACM_CACHE_MAX_BYTES", "1", 1);
  ASSERT_EQ(compile_in_mode(dir.path(), b).status, HIPACM_SUCCESS);
  auto admin = cache::CacheAdmin::open(dir.db());
  const auto listed = admin.list();
  ASSERT_EQ(listed.size(), 1u) << "exceeded by at most the newest entry";
  EXPECT_TRUE(compile_in_mode(dir.path(), b).from_cache);
}

// The variable takes what `hipacm cache prune --max-bytes` takes; anything else is the default.
TEST_F(CacheLru, TheBoundTakesBytesOrAUnit) {
  constexpr std::int64_t kDefault = std::int64_t{2} << 30;
  const std::pair<const char*, std::int64_t> cases[] = {
      {"4096", 4096},
      {"100KiB", 100 * 1024},
      {"512M", std::int64_t{512} << 20},
      {"1.5G", (std::int64_t{3} << 30) / 2},
      {"5g", std::int64_t{5} << 30},
      {"5GB", kDefault},   // ambiguous: refused, not guessed
      {"-1", kDefault},    // negative
      {"lots", kDefault},  // not a number
      {"1e9", kDefault},   // no exponents
  };
  for (const auto& [text, expected] : cases) {
    setenv("HIPACM_CACHE_MAX_BYTES", text, 1);
    EXPECT_EQ(cache::max_cache_bytes(), expected) << text;
  }
  unsetenv("HIPACM_CACHE_MAX_BYTES");
  EXPECT_EQ(cache::max_cache_bytes(), kDefault);
}

TEST_F(CacheLru, PruneAndClear) {
  TempDir dir;
  CountingFactory counter;
  for (const char* name : {"p1", "p2", "p3"}) {
    CompileSpec spec;
    spec.source = kernel_source(name);
    ASSERT_EQ(compile_in_mode(dir.path(), spec).status, HIPACM_SUCCESS);
  }
  auto admin = cache::CacheAdmin::open(dir.db());
  const auto before = admin.stats();
  ASSERT_EQ(before.entries, 3);
  EXPECT_EQ(admin.prune(before.total_bytes - 1), 1u);
  EXPECT_EQ(admin.stats().entries, 2);
  EXPECT_EQ(admin.clear(), 2u);
  EXPECT_EQ(admin.stats().entries, 0);
  EXPECT_EQ(admin.stats().total_bytes, 0);
}

}  // namespace
}  // namespace hipacm::cache_test
