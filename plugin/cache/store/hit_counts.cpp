// SPDX-License-Identifier: MIT
// hit_counts.cpp - hits, misses and the other recorded counters: buffered in memory, written in
// batches, read, and zeroed.
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {
namespace {

using store_internal::ResetOnExit;

// Buffered events written per transaction (see touch()).
constexpr std::int64_t kHitsPerFlush = 256;

// A counter row's value: text of at most 20 digits, else (a damaged row) 0.
constexpr const char* kReadCounter =
    "SELECT max(0, CAST(value AS INTEGER)) FROM meta WHERE name=? AND "
    "typeof(value)='text' AND length(value) <= 20";

void put_meta(Database& db, const char* name, std::int64_t value) {
  db.prepare(
        "INSERT INTO meta(name, value) VALUES(?1, CAST(?2 AS TEXT)) ON CONFLICT(name) DO UPDATE "
        "SET value=CAST(?2 AS TEXT)")
      .bind(1, name)
      .bind(2, value)
      .step();
}

// Records the counters' layout; never lowers a version a newer writer recorded.
void note_stats_version(Database& db) {
  db.prepare(
        "INSERT INTO meta(name, value) VALUES(?1, CAST(?2 AS TEXT)) ON CONFLICT(name) DO "
        "UPDATE SET value=CAST(max(?2, CAST(value AS INTEGER)) AS TEXT)")
      .bind(1, kStatsVersionRow)
      .bind(2, std::int64_t{kStatsVersion})
      .step();
}

}  // namespace

void CacheStore::touch(const std::string& key) {
  locked([&] {
    PendingHit& hit = pending_hits_[key];
    ++hit.count;
    hit.last_used_us = now_us();
    ++at(pending_counts_, Counter::kHits);
    note_pending_locked();
  });
}

void CacheStore::record_miss() { record(Counter::kMisses); }

void CacheStore::record(Counter counter) {
  if (access_ != Access::kReadWrite) return;
  locked([&] {
    ++at(pending_counts_, counter);
    note_pending_locked();
  });
}

void CacheStore::touch_failure(const std::string& key) {
  locked([&] {
    pending_failure_uses_[key] = now_us();
    ++at(pending_counts_, Counter::kFailureHits);
    note_pending_locked();
  });
}

void CacheStore::note_pending_locked() {
  if (++pending_total_ >= kHitsPerFlush) flush_hits_locked();
}

void CacheStore::flush_hits() {
  locked([&] { flush_hits_locked(); });
}

void CacheStore::flush_hits_locked() {
  if (pending_total_ == 0 || access_ != Access::kReadWrite) return;
  // Dropped whatever happens: hit counts are advisory, and a failing write
  // must not make every later hit retry it.
  std::map<std::string, PendingHit> pending;
  pending.swap(pending_hits_);
  std::map<std::string, std::int64_t> failure_uses;
  failure_uses.swap(pending_failure_uses_);
  const Counts counts = std::exchange(pending_counts_, Counts{});
  pending_total_ = 0;
  if (!touch_)
    touch_.emplace(db_->handle(),
                   "UPDATE entries SET last_used_us=max(last_used_us, ?), hits=hits+? WHERE key=?");
  Transaction tx(*db_);
  for (const auto& [key, hit] : pending) {
    ResetOnExit reset{*touch_};
    touch_->bind(1, hit.last_used_us).bind(2, hit.count).bind(3, key);
    touch_->step();
  }
  if (!failure_uses.empty()) {
    Statement use =
        db_->prepare("UPDATE failures SET last_used_us=max(last_used_us, ?) WHERE key=?");
    for (const auto& [key, last_used_us] : failure_uses) {
      ResetOnExit reset{use};
      use.bind(1, last_used_us).bind(2, key);
      use.step();
    }
  }
  // A value that is not a number (a damaged row) counts from zero again.
  Statement add = db_->prepare(
      "INSERT INTO meta(name, value) VALUES(?1, CAST(?2 AS TEXT)) ON CONFLICT(name) DO UPDATE "
      "SET value=CAST(max(0, CAST(value AS INTEGER)) + ?2 AS TEXT)");
  bool beyond_first_layout = false;
  for (std::size_t i = 0; i < kCounterCount; ++i) {
    if (counts[i] == 0) continue;
    beyond_first_layout = beyond_first_layout || i >= 2;
    ResetOnExit reset{add};
    add.bind(1, kCounterRows[i]).bind(2, counts[i]);
    add.step();
  }
  if (beyond_first_layout) note_stats_version(*db_);
  tx.commit();
}

std::int64_t CacheStore::recorded_counter_locked(const char* name) {
  Statement get = db_->prepare(kReadCounter);
  get.bind(1, name);
  return get.step() ? get.integer(0) : 0;
}

std::int64_t CacheStore::recorded_hits() {
  return locked([&] {
    return recorded_counter_locked(kCounterRows[0]) + at(pending_counts_, Counter::kHits);
  });
}

std::int64_t CacheStore::recorded_misses() {
  return locked([&] {
    return recorded_counter_locked(kCounterRows[1]) + at(pending_counts_, Counter::kMisses);
  });
}

RecordedCounts CacheStore::recorded_counts() {
  return locked([&] {
    RecordedCounts recorded;
    for (std::size_t i = 0; i < kCounterCount; ++i)
      recorded.counts[i] = recorded_counter_locked(kCounterRows[i]) + pending_counts_[i];
    recorded.zeroed_us = recorded_counter_locked(kStatsZeroedRow);
    return recorded;
  });
}

CounterReset CacheStore::reset_counters() {
  if (access_ != Access::kReadWrite)
    throw std::runtime_error(path_ + " is open read-only: its statistics cannot be zeroed");
  return locked([&] {
    // This process's unwritten events happened before the reset: written first, they are
    // zeroed with the rest.
    flush_hits_locked();
    CounterReset reset;
    Transaction tx(*db_);
    for (std::size_t i = 0; i < kCounterCount; ++i)
      reset.counts[i] = recorded_counter_locked(kCounterRows[i]);
    // total(): a sum of untrusted values that cannot overflow.
    Statement entries = db_->prepare(
        "SELECT count(*), CAST(min(total(max(0, hits)), 9.0e18) AS INTEGER) FROM entries "
        "WHERE hits <> 0");
    if (entries.step()) {
      reset.entries_zeroed = entries.integer(0);
      reset.entry_hits = entries.integer(1);
    }
    db_->exec("UPDATE entries SET hits=0 WHERE hits <> 0");
    Statement erase = db_->prepare("DELETE FROM meta WHERE name=?");
    for (const char* row : kCounterRows) {
      ResetOnExit done{erase};
      erase.bind(1, row);
      erase.step();
    }
    reset.zeroed_us = now_us();
    put_meta(*db_, kStatsZeroedRow, reset.zeroed_us);
    note_stats_version(*db_);
    tx.commit();
    return reset;
  });
}

}  // namespace hipacm::cache
