// SPDX-License-Identifier: MIT
// cluster_messages.h - the bytes ranks send each other: cache entries, and each rank's report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin/cache/store/entry.h"
#include "support/failure.h"
#include "tools/cluster/bounded_cbor.h"

namespace hipacm::cli {

/// Bounds on what a rank accepts from another. A message is untrusted input: it is decoded
/// against these, and an entry is then checked again by the cache before it is stored.
inline constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 30;  // MPI counts are int
inline constexpr std::size_t kMaxCodeBytes = std::size_t{256} << 20;
inline constexpr std::size_t kMaxLogBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxNames = 100'000;
inline constexpr std::size_t kMaxReportLogBytes = 64 * 1024;
/// A cache entry for item `item` of the job.
struct EntryForItem {
  std::size_t item = 0;
  cache::CacheEntry entry;
};

std::vector<std::uint8_t> encode_entries(const std::vector<const EntryForItem*>& entries);

/// The entries, or an INVALID_ARGUMENT failure when `bytes` is not a well-formed entries message
/// within the bounds, or names an item at or past `item_count`.
Expected<std::vector<EntryForItem>> decode_entries(const std::uint8_t* bytes, std::size_t size,
                                                   std::size_t item_count);

/// How one item that a rank ran ended (warmup_run's KernelOutcome, without the code).
struct ItemOutcome {
  std::size_t item = 0;
  std::int32_t status = 0;  ///< hipacm_status
  bool from_cache = false;
  std::uint64_t code_size = 0;
  double compile_seconds = 0.0;
  std::string key;
  std::string error;
  std::string log;  ///< cut to kMaxReportLogBytes by the sender
  std::vector<std::string> kernels;
};

/// What a rank did in the job, for rank 0's report.
struct RankReport {
  std::int32_t rank = 0;
  std::string cache_dir;
  std::vector<ItemOutcome> outcomes;
  std::vector<std::pair<std::string, double>> arch_wall_seconds;
  double compile_wall_seconds = 0.0;  ///< its share's compiles, start to end
  double wall_seconds = 0.0;          ///< the whole job on this rank, to its report
  std::uint64_t entries_sent = 0;
  std::uint64_t entries_received = 0;  ///< stored in its cache (or, on rank 0, the export)
  std::uint64_t duplicates_received = 0;
  std::uint64_t rejected_received = 0;
  std::uint64_t messages_sent = 0;  ///< code-object messages, one per rank that needed some
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_sent = 0;  ///< code-object message bytes
  std::uint64_t bytes_received = 0;
  std::uint64_t control_bytes_sent = 0;  ///< everything else: bitmaps, plan, progress, report
  std::uint64_t missing_after = 0;  ///< items its cache still lacks at the end (failed ones too)
  std::vector<std::string> rejections;  ///< why received entries were refused
};

std::vector<std::uint8_t> encode_report(const RankReport& report);

/// The report, or an INVALID_ARGUMENT failure when `bytes` is not a well-formed report within the
/// bounds, or names an item at or past `item_count`.
Expected<RankReport> decode_report(const std::uint8_t* bytes, std::size_t size,
                                   std::size_t item_count);

}  // namespace hipacm::cli
