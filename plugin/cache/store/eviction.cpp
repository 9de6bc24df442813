// SPDX-License-Identifier: MIT
// eviction.cpp - removing entries in bulk: least recently used first down to a size bound, or all.
#include <string>
#include <utility>
#include <vector>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::cache {

using store_internal::kPayloadBytes;

std::size_t CacheStore::evict_to(std::int64_t max_bytes, const std::string& keep_key) {
  return locked([&] {
    flush_hits_locked();
    Transaction tx(*db_);
    std::int64_t bytes = store_internal::payload_total(*db_);
    std::size_t removed = 0;
    std::int64_t payload_evicted = 0;
    std::int64_t code_evicted = 0;
    if (bytes > max_bytes) {
      Statement oldest = db_->prepare(std::string("SELECT key, ") + kPayloadBytes +
                                      ", length(code) FROM entries ORDER BY last_used_us, key");
      Statement erase = db_->prepare("DELETE FROM entries WHERE key=?");
      std::vector<std::string> victims;
      while (bytes > max_bytes && oldest.step()) {
        std::string key = oldest.text(0);
        if (key == keep_key) continue;
        bytes -= oldest.integer(1);
        payload_evicted += oldest.integer(1);
        code_evicted += oldest.integer(2);
        victims.push_back(std::move(key));
      }
      oldest.reset();
      for (const auto& key : victims) {
        erase.bind(1, key).step();
        erase.reset();
        ++removed;
      }
    }
    tx.commit();
    if (removed > 0) {
      backend::count(backend::stats().cache_evictions, removed);
      backend::count(backend::stats().bytes_evicted, static_cast<std::uint64_t>(code_evicted));
      backend::log(backend::LogLevel::kInfo,
                   "evicted " + std::to_string(removed) + " least recently used entries (" +
                       std::to_string(payload_evicted) + " bytes, " + std::to_string(code_evicted) +
                       " of them code) from the kernel cache " + path_ + " to keep it within " +
                       std::to_string(max_bytes) + " bytes");
    }
    return removed;
  });
}

std::size_t CacheStore::clear() {
  return locked([&] {
    Transaction tx(*db_);
    db_->exec("DELETE FROM entries");
    const auto n = static_cast<std::size_t>(sqlite3_changes64(db_->handle()));
    db_->exec("DELETE FROM library_facts");
    db_->exec("DELETE FROM failures");
    // Every recorded counter (counters.h) goes with the entries.
    Statement erase = db_->prepare("DELETE FROM meta WHERE name=?");
    for (const char* row : kCounterRows) {
      store_internal::ResetOnExit done{erase};
      erase.bind(1, row);
      erase.step();
    }
    db_->prepare(
           "INSERT INTO meta(name, value) VALUES(?1, CAST(?2 AS TEXT)) ON CONFLICT(name) DO "
           "UPDATE SET value=CAST(?2 AS TEXT)")
        .bind(1, kStatsZeroedRow)
        .bind(2, now_us())
        .step();
    tx.commit();
    pending_hits_.clear();
    pending_failure_uses_.clear();
    pending_counts_ = Counts{};
    pending_total_ = 0;
    return n;
  });
}

}  // namespace hipacm::cache
