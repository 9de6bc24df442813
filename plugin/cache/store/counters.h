// SPDX-License-Identifier: MIT
// counters.h - the statistics a cache database records for `hipacm cache stats`: the set, its rows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace hipacm::cache {

/// What the hosts that use a cache record in it (READWRITE only), each a running total in a row
/// of the meta table. A fixed set, so the table stays bounded whatever the hosts do.
enum class Counter : std::size_t {
  kHits,             ///< lookups served an entry
  kMisses,           ///< lookups that found nothing usable and compiled
  kFailureHits,      ///< lookups served a stored compile failure (cache_failures)
  kCompileErrors,    ///< after a miss, the compiler refused the source (COMPILATION)
  kCrashErrors,      ///< after a miss, the compiler crashed
  kTimeoutErrors,    ///< after a miss, the compile (or the wait for another's) timed out
  kOtherErrors,      ///< after a miss, any other failure (out of memory, no backend, internal)
  kUncacheable,      ///< compiled without the cache: reads it cannot account for (CACHE.md)
  kUnknownCompiler,  ///< compiled without the cache: no exact compiler version to key it by
};
inline constexpr std::size_t kCounterCount = 9;

/// Each counter's meta row, in Counter's order. The first two are the rows of the first layout
/// (a database without a `stats_version` row has only those); the rest came with version 2.
inline constexpr std::array<const char*, kCounterCount> kCounterRows = {
    "hits",
    "misses",
    "failure_hits",
    "errors.compilation",
    "errors.crash",
    "errors.timeout",
    "errors.other",
    "passthroughs.uncacheable",
    "passthroughs.no_compiler_version"};

/// The layout of the counter rows, recorded in the meta row `stats_version` once a version-2
/// writer has written any: readers read the rows they know by name and ignore the others, so a
/// database of either version is readable by both.
inline constexpr int kStatsVersion = 2;
inline constexpr const char* kStatsVersionRow = "stats_version";
/// When the counters were last zeroed (`hipacm cache stats --reset`, `cache clear`), in
/// microseconds since the epoch; absent while they never were.
inline constexpr const char* kStatsZeroedRow = "stats_zeroed_us";

using Counts = std::array<std::int64_t, kCounterCount>;

inline std::int64_t& at(Counts& counts, Counter counter) {
  return counts[static_cast<std::size_t>(counter)];
}
inline std::int64_t at(const Counts& counts, Counter counter) {
  return counts[static_cast<std::size_t>(counter)];
}

/// The recorded counters and since when they count.
struct RecordedCounts {
  Counts counts{};
  std::int64_t zeroed_us = 0;  ///< 0: never zeroed (they count since the database was made)
};

/// What a reset zeroed: the counters' values and the entries' own hit counts, as they were.
struct CounterReset {
  Counts counts{};
  std::int64_t entry_hits = 0;      ///< the sum of the entries' hit counts
  std::int64_t entries_zeroed = 0;  ///< entries whose hit count was not 0
  std::int64_t zeroed_us = 0;       ///< when (now)
};

}  // namespace hipacm::cache
