// SPDX-License-Identifier: MIT
// counter_reset_test.cpp - the cache's recorded counters (counters.h) and their reset: what it
// returns and zeroes, and that batches written around it lose no count and count none twice.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "plugin/cache/store/counters.h"
#include "plugin/cache/store/schema.h"
#include "plugin/cache/store/store.h"
#include "tests/temp_dir.h"

namespace hipacm::cache {
namespace {

std::string database_in(const test::TempDir& dir) { return dir.path() + "/" + kDatabaseFileName; }

TEST(CounterReset, ZeroesWhatWasRecordedAndSaysWhatItWas) {
  test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto host = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  host->record_miss();
  host->record_miss();
  host->record(Counter::kCompileErrors);
  host->record(Counter::kUncacheable);
  host->touch_failure(std::string(64, 'f'));
  host->flush_hits();
  // Another connection, as `hipacm cache stats --reset` is another process.
  auto admin = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  const RecordedCounts before = admin->recorded_counts();
  EXPECT_EQ(at(before.counts, Counter::kMisses), 2);
  EXPECT_EQ(before.zeroed_us, 0) << "never zeroed";
  const CounterReset reset = admin->reset_counters();
  EXPECT_EQ(reset.counts, before.counts);
  EXPECT_EQ(at(reset.counts, Counter::kFailureHits), 1);
  EXPECT_EQ(at(reset.counts, Counter::kCompileErrors), 1);
  EXPECT_EQ(at(reset.counts, Counter::kUncacheable), 1);
  EXPECT_GT(reset.zeroed_us, 0);
  const RecordedCounts after = host->recorded_counts();
  EXPECT_EQ(after.counts, Counts{});
  EXPECT_EQ(after.zeroed_us, reset.zeroed_us);
  // Counting goes on from zero.
  host->record(Counter::kTimeoutErrors);
  host->flush_hits();
  EXPECT_EQ(at(admin->recorded_counts().counts, Counter::kTimeoutErrors), 1);
}

TEST(CounterReset, CountsBufferedElsewhereLandAfterTheReset) {
  test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto host = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  auto admin = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  host->record_miss();
  host->record_miss();
  host->record_miss();
  EXPECT_EQ(at(admin->reset_counters().counts, Counter::kMisses), 0) << "not yet written";
  host->flush_hits();
  EXPECT_EQ(admin->recorded_misses(), 3);
}

TEST(CounterReset, ResettersOwnBufferedCountsAreZeroedWithTheRest) {
  test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto store = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  store->record_miss();
  EXPECT_EQ(at(store->reset_counters().counts, Counter::kMisses), 1);
  store->flush_hits();
  EXPECT_EQ(store->recorded_misses(), 0) << "a reset count must not come back";
}

TEST(CounterReset, AReadOnlyStoreRefusesAndChangesNothing) {
  test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto host = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  host->record_miss();
  host->flush_hits();
  auto reader = CacheStore::open(database_in(dir), CacheStore::Access::kReadOnly);
  EXPECT_THROW(reader->reset_counters(), std::exception);
  EXPECT_EQ(host->recorded_misses(), 1);
}

// Batches and resets on two connections, as a host and `cache stats --reset` in two processes:
// every count is either returned by exactly one reset or still recorded at the end.
TEST(CacheConcurrency, ResetsAndBatchesLoseNoCountAndCountNoneTwice) {
  test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  auto host = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  auto admin = CacheStore::open(database_in(dir), CacheStore::Access::kReadWrite);
  constexpr int kBatches = 200;
  constexpr int kPerBatch = 5;
  std::atomic<bool> done{false};
  std::atomic<int> flushed{0};
  std::int64_t zeroed = 0;
  // At most one reset per flushed batch, each racing the next batch's flush: back-to-back resets
  // would hold the database's write lock so often that the writer could starve past its busy
  // timeout (seen under ThreadSanitizer), which is not the race under test. A jthread joins
  // even when the loop below throws.
  std::jthread resetter([&] {
    while (!done.load()) {
      const int seen = flushed.load();
      zeroed += at(admin->reset_counters().counts, Counter::kOtherErrors);
      while (!done.load() && flushed.load() == seen)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  for (int batch = 0; batch < kBatches; ++batch) {
    for (int i = 0; i < kPerBatch; ++i) host->record(Counter::kOtherErrors);
    host->flush_hits();
    flushed.fetch_add(1);
  }
  done.store(true);
  resetter.join();
  EXPECT_EQ(zeroed + at(admin->recorded_counts().counts, Counter::kOtherErrors),
            kBatches * kPerBatch);
}

}  // namespace
}  // namespace hipacm::cache
