// SPDX-License-Identifier: MIT
// stats.h - the process-wide event counters behind hipacm_get_stats.
#pragma once

#include <hipacm/hipacm.h>

#include <atomic>
#include <cstdint>

namespace hipacm::backend {

/// One monotonic counter per event that hipacm_stats reports. Increments are
/// relaxed: each counter is read on its own, and nothing else is published
/// through it.
struct StatsCounters {
  std::atomic<std::uint64_t> compiles{0};
  std::atomic<std::uint64_t> compile_failures{0};
  std::atomic<std::uint64_t> cache_hits{0};
  std::atomic<std::uint64_t> cache_misses{0};
  std::atomic<std::uint64_t> cache_stores{0};
  std::atomic<std::uint64_t> bytes_stored{0};
  std::atomic<std::uint64_t> cache_evictions{0};
  std::atomic<std::uint64_t> bytes_evicted{0};
  std::atomic<std::uint64_t> worker_spawns{0};
  std::atomic<std::uint64_t> worker_crashes{0};
  std::atomic<std::uint64_t> timeouts{0};
  std::atomic<std::uint64_t> cached_failures{0};
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
