// SPDX-License-Identifier: MIT
// pass_counts.h - process-wide counts of the costly passes made over a request (its cache key,
// its include scan, a store lookup, a check of a compile result), so tests can pin how many one
// compile takes.
#pragma once

#include <atomic>
#include <cstdint>

namespace hipacm::backend {

/// Not part of hipacm_stats (the C ABI): how often each pass ran, for tests that hold a compile
/// to one of each (a second key or scan of one request is work wasted on every miss). Relaxed
/// increments: each counter is read on its own.
struct PassCounts {
  std::atomic<std::uint64_t> cache_keys{0};     ///< plugin/cache: a request's cache key made
  std::atomic<std::uint64_t> input_scans{0};    ///< plugin/cache/key: scan_external_inputs
  std::atomic<std::uint64_t> store_lookups{0};  ///< plugin/cache: a key looked up in the store
  std::atomic<std::uint64_t> result_checks{0};  ///< hip_backend/codeobject: check_compile_result
};

/// The process's counts; constant-initialised, usable from any thread at any time.
inline PassCounts& pass_counts() noexcept {
  static PassCounts counts;
  return counts;
}

/// Adds one to `counter` (relaxed).
inline void count_pass(std::atomic<std::uint64_t>& counter) noexcept {
  counter.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace hipacm::backend
