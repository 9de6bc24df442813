// SPDX-License-Identifier: MIT
// stats.h - the process-wide event counters behind hipacm_get_stats.
#pragma once

#include <hipacm/hipacm.h>

#include <atomic>
#include <cstdint>

namespace hipacm::backend {

// The counters, in hipacm_stats's order: the one list that both StatsCounters's fields and
// hipacm_get_stats's copy into hipacm_stats are generated from, so neither can miss one.
// clang-format off
#define HIPACM_STATS_COUNTERS(X)                                             \
  X(compiles)      X(compile_failures) X(cache_hits)      X(cache_misses)    \
  X(cache_stores)  X(bytes_stored)     X(cache_evictions) X(bytes_evicted)   \
  X(worker_spawns) X(worker_crashes)   X(timeouts)        X(cached_failures)   \
  X(remote_hits)   X(remote_misses)    X(remote_refused)  X(remote_stores)     \
  X(remote_duplicates) X(remote_store_failures) X(remote_errors) X(remote_waits)
// clang-format on

/// One monotonic counter per event that hipacm_stats reports. Increments are
/// relaxed: each counter is read on its own, and nothing else is published
/// through it.
struct StatsCounters {
#define HIPACM_STATS_COUNTER_FIELD(name) std::atomic<std::uint64_t> name{0};
  HIPACM_STATS_COUNTERS(HIPACM_STATS_COUNTER_FIELD)
#undef HIPACM_STATS_COUNTER_FIELD
};

/// The process's counters. Constant-initialised storage: no global
/// constructor, and usable from any thread at any time, exit included.
StatsCounters& stats() noexcept;

/// Adds `amount` to `counter` (relaxed).
inline void count(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) noexcept {
  counter.fetch_add(amount, std::memory_order_relaxed);
}

/// A compiler run starts, in process or in a worker. Counted in the host that
/// asked for it (a worker's own counters are another process's), by the two
/// compile steps that start runs, once per run.
inline void count_compile_started() noexcept { count(stats().compiles); }

/// That run's outcome: HIPACM_ERROR_COMPILATION counts as a compile failure.
inline void count_compile_ended(hipacm_status outcome) noexcept {
  if (outcome == HIPACM_ERROR_COMPILATION) count(stats().compile_failures);
}

}  // namespace hipacm::backend
