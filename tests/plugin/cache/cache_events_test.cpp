// SPDX-License-Identifier: MIT
// cache_events_test.cpp - what the cache counts (hipacm_get_stats), logs, and records as its
// persisted hit rate (CacheStore::recorded_hits and recorded_misses).
#include <gtest/gtest.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <string>
#include <vector>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/store/store.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

using cache::CacheStore;

hipacm_stats read_stats() {
  hipacm_stats s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(hipacm_get_stats(&s), HIPACM_SUCCESS);
  return s;
}

/// Collects the plugin's log events while it lives.
class LogCapture {
 public:
  explicit LogCapture(std::int32_t max_level) {
    EXPECT_EQ(hipacm_set_log_callback(&LogCapture::receive, this, max_level), HIPACM_SUCCESS);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  ~LogCapture() { hipacm_set_log_callback(nullptr, nullptr, HIPACM_LOG_WARNING); }

  /// How many events at `level` hold `text`.
  int count(std::int32_t level, const std::string& text) {
    boost::lock_guard<boost::mutex> lock(mutex_);
    int n = 0;
    for (const auto& [l, message] : events_)
      if (l == level && message.find(text) != std::string::npos) ++n;
    return n;
  }

 private:
  static void receive(void* user, std::int32_t level, const char* message) {
    auto* self = static_cast<LogCapture*>(user);
    boost::lock_guard<boost::mutex> lock(self->mutex_);
    self->events_.emplace_back(level, message);
  }
  boost::mutex mutex_;
  std::vector<std::pair<std::int32_t, std::string>> events_;
};

class CacheEvents : public CacheEnvironment {};

TEST_F(CacheEvents, MissStoreAndHitAreCountedAndLoggedOnce) {
  TempDir dir;
  LogCapture logs(HIPACM_LOG_DEBUG);
  const hipacm_stats before = read_stats();
  Outcome cold, hit;
  ASSERT_NO_FATAL_FAILURE(compile_cold_then_hit(dir.path(), {}, &cold, &hit));
  const hipacm_stats after = read_stats();
  EXPECT_EQ(after.cache_misses - before.cache_misses, 1u);
  EXPECT_EQ(after.cache_stores - before.cache_stores, 1u);
  EXPECT_EQ(after.bytes_stored - before.bytes_stored, cold.code.size());
  EXPECT_EQ(after.cache_hits - before.cache_hits, 1u);
  EXPECT_EQ(after.cache_evictions - before.cache_evictions, 0u);
  EXPECT_EQ(after.cached_failures - before.cached_failures, 0u);
  EXPECT_EQ(logs.count(HIPACM_LOG_DEBUG, "kernel cache miss"), 1);
  EXPECT_EQ(logs.count(HIPACM_LOG_DEBUG, "kernel cache hit"), 1);
  EXPECT_EQ(logs.count(HIPACM_LOG_DEBUG, "bytes of code) in"), 1);
}

TEST_F(CacheEvents, UncachedPoliciesCountNothing) {
  TempDir dir;
  CountingFactory counter;
  const hipacm_stats before = read_stats();
  CompileSpec off;
  off.policy = HIPACM_CACHE_OFF;
  ASSERT_EQ(compile_in_mode(dir.path(), off).status, HIPACM_SUCCESS);
  const hipacm_stats after = read_stats();
  EXPECT_EQ(after.cache_misses, before.cache_misses);
  EXPECT_EQ(after.cache_stores, before.cache_stores);
  EXPECT_EQ(after.cache_hits, before.cache_hits);
}

TEST_F(CacheEvents, EvictionsAreCountedAndLoggedAtInfo) {
  TempDir dir;
  CountingFactory counter;
  LogCapture logs(HIPACM_LOG_INFO);
  CompileSpec first, second;
  first.source = kernel_source("events_first");
  second.source = kernel_source("events_second");
  const Outcome kept = compile_in_mode(dir.path(), first);
  ASSERT_EQ(kept.status, HIPACM_SUCCESS);
  // Room for one entry only: storing the second evicts the first.
  setenv("HIPACM_CACHE_MAX_BYTES", "1", 1);
  const hipacm_stats before = read_stats();
  ASSERT_EQ(compile_in_mode(dir.path(), second).status, HIPACM_SUCCESS);
  const hipacm_stats after = read_stats();
  EXPECT_EQ(after.cache_evictions - before.cache_evictions, 1u);
  EXPECT_EQ(after.bytes_evicted - before.bytes_evicted, kept.code.size());
  EXPECT_EQ(logs.count(HIPACM_LOG_INFO, "evicted 1 least recently used entries"), 1);
  EXPECT_EQ(logs.count(HIPACM_LOG_DEBUG, "kernel cache"), 0) << "debug events stay out at info";
}

TEST_F(CacheEvents, HitsAndMissesArePersisted) {
  TempDir dir;
  Outcome cold, hit;
  ASSERT_NO_FATAL_FAILURE(compile_cold_then_hit(dir.path(), {}, &cold, &hit));
  CompileSpec other;
  other.source = kernel_source("persisted_other");
  ASSERT_NO_FATAL_FAILURE(compile_cold_then_hit(dir.path(), other, &cold, &hit));
  {
    CountingFactory counter;
    EXPECT_TRUE(compile_in_mode(dir.path(), other).from_cache);
  }
  // Each mode's exit wrote its buffered counts; another connection reads them.
  auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadOnly);
  EXPECT_EQ(store->recorded_misses(), 2);
  EXPECT_EQ(store->recorded_hits(), 3);

  // READ never writes them.
  CompileSpec read;
  read.policy = HIPACM_CACHE_READ;
  read.source = kernel_source("persisted_read_miss");
  {
    CountingFactory counter;
    ASSERT_EQ(compile_in_mode(dir.path(), read).status, HIPACM_SUCCESS);
    read.source = kernel_source();
    EXPECT_TRUE(compile_in_mode(dir.path(), read).from_cache);
  }
  EXPECT_EQ(store->recorded_misses(), 2);
  EXPECT_EQ(store->recorded_hits(), 3);

  // Evicting entries keeps the recorded hits; clearing the cache starts them over.
  cache::CacheAdmin::open(dir.db()).prune(0);
  EXPECT_EQ(store->recorded_hits(), 3);
  EXPECT_EQ(cache::CacheAdmin::open(dir.db()).clear(), 0u);
  EXPECT_EQ(store->recorded_misses(), 0);
  EXPECT_EQ(store->recorded_hits(), 0);
}

TEST_F(CacheEvents, BufferedCountsAreReadBeforeTheyAreWritten) {
  TempDir dir;
  auto writer = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
  auto reader = CacheStore::open(dir.db(), CacheStore::Access::kReadOnly);
  writer->record_miss();
  writer->record_miss();
  writer->touch(std::string(64, 'a'));
  EXPECT_EQ(writer->recorded_misses(), 2);
  EXPECT_EQ(writer->recorded_hits(), 1);
  EXPECT_EQ(reader->recorded_misses(), 0) << "buffered, not yet written";
  writer->flush_hits();
  EXPECT_EQ(reader->recorded_misses(), 2);
  EXPECT_EQ(reader->recorded_hits(), 1);
  EXPECT_EQ(writer->recorded_misses(), 2) << "no double count after the write";
  reader->record_miss();  // a read-only store records nothing
  EXPECT_EQ(reader->recorded_misses(), 2);
}

TEST_F(CacheEvents, DamagedCountersReadAsZeroAndCountOnFromIt) {
  TempDir dir;
  auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
  store->execute_for_testing(
      "INSERT INTO meta(name, value) VALUES('misses', 'lots'), ('hits', '-40')");
  EXPECT_EQ(store->recorded_misses(), 0);
  EXPECT_EQ(store->recorded_hits(), 0);
  store->execute_for_testing(
      "UPDATE meta SET value = printf('%.*c', 100000, '9') "
      "WHERE name = 'misses'");
  EXPECT_EQ(store->recorded_misses(), 0) << "an oversized value is not read";
  store->execute_for_testing("UPDATE meta SET value = 'lots' WHERE name = 'misses'");
  store->record_miss();
  store->touch(std::string(64, 'b'));
  store->flush_hits();
  EXPECT_EQ(store->recorded_misses(), 1);
  EXPECT_EQ(store->recorded_hits(), 1);
}

}  // namespace
}  // namespace hipacm::cache_test
