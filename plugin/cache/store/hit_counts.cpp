// SPDX-License-Identifier: MIT
// hit_counts.cpp - hit, miss and failure-use accounting, buffered in memory and written in batches.
#include <map>
#include <string>
#include <utility>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {
namespace {

using store_internal::ResetOnExit;

// Buffered hits written per transaction (see touch()).
constexpr std::int64_t kHitsPerFlush = 256;

// The meta rows that hold the recorded hits and misses.
constexpr const char* kHitsCounter = "hits";
constexpr const char* kMissesCounter = "misses";

}  // namespace

void CacheStore::touch(const std::string& key) {
  locked([&] {
    PendingHit& hit = pending_hits_[key];
    ++hit.count;
    hit.last_used_us = now_us();
    ++pending_hit_count_;
    note_pending_locked();
  });
}

void CacheStore::record_miss() {
  if (access_ != Access::kReadWrite) return;
  locked([&] {
    ++pending_misses_;
    note_pending_locked();
  });
}

void CacheStore::touch_failure(const std::string& key) {
  locked([&] {
    pending_failure_uses_[key] = now_us();
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
  const std::int64_t hits = std::exchange(pending_hit_count_, 0);
  const std::int64_t misses = std::exchange(pending_misses_, 0);
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
  const std::pair<const char*, std::int64_t> counters[] = {{kHitsCounter, hits},
                                                           {kMissesCounter, misses}};
  for (const auto& [name, amount] : counters) {
    if (amount == 0) continue;
    ResetOnExit reset{add};
    add.bind(1, name).bind(2, amount);
    add.step();
  }
  tx.commit();
}

std::int64_t CacheStore::recorded_counter_locked(const char* name) {
  Statement get = db_->prepare(
      "SELECT max(0, CAST(value AS INTEGER)) FROM meta WHERE name=? AND "
      "typeof(value)='text' AND length(value) <= 20");
  get.bind(1, name);
  return get.step() ? get.integer(0) : 0;
}

std::int64_t CacheStore::recorded_hits() {
  return locked([&] { return recorded_counter_locked(kHitsCounter) + pending_hit_count_; });
}

std::int64_t CacheStore::recorded_misses() {
  return locked([&] { return recorded_counter_locked(kMissesCounter) + pending_misses_; });
}

}  // namespace hipacm::cache
