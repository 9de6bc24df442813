// SPDX-License-Identifier: MIT
// shard_plan.h - which rank compiles, or serves from its cache, each (kernel, arch) of a job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/input/kernel_input.h"

namespace hipacm::cli {

/// One compile of the job: an input for an arch, in the warmup's compile order (arch-major,
/// inputs in order, each input only for the archs it compiles for), as WarmupSettings::only_items
/// and dry_run() count them.
struct JobItem {
  std::size_t input = 0;
  std::string arch;
};

std::vector<JobItem> job_items(const std::vector<KernelInput>& inputs,
                               const std::vector<std::string>& archs);

/// A digest of what every item asks the compiler (arch, name, source, options, headers, name
/// expressions): ranks given different arguments or files disagree on it.
std::uint64_t job_fingerprint(const std::vector<KernelInput>& inputs,
                              const std::vector<JobItem>& items);

/// Each item's expected compile cost, and what it was measured in.
struct ItemCosts {
  std::vector<double> cost;
  std::string basis;  ///< "source bytes", "report seconds", or "report seconds and source bytes"
  std::size_t from_report = 0;
};

/// Compile seconds from `earlier_report` (a warmup --json report; null for none) for the items it
/// compiled, matched by label and arch; the others' source bytes (source and headers), turned
/// into seconds at the report's median seconds per byte when it gave any.
ItemCosts item_costs(const std::vector<KernelInput>& inputs, const std::vector<JobItem>& items,
                     const nlohmann::json* earlier_report);

/// Serving an entry from a cache costs a lookup, not a compile: this share of its compile cost.
inline constexpr double kServeCostShare = 0.01;

struct ShardPlan {
  /// Per item: the rank that compiles it when no rank holds it, else one of its holders, which
  /// serves it from its cache (and sends it where it is missing).
  std::vector<int> provider;
  std::vector<bool> compile;  ///< per item: no rank held it
  std::vector<double> load;   ///< per rank: the cost it was given
};

/// Longest-processing-time first: items by falling cost, each to the least-loaded rank that may
/// take it (any rank for a compile, a holder for a served item; ties to the lowest rank), so the
/// slowest rank finishes at most one item's cost after the mean. `held[r][i]`: rank r's cache
/// holds item i.
ShardPlan plan_shards(const std::vector<double>& cost, const std::vector<std::vector<bool>>& held);

/// The ranks that receive item `item` from its provider: every rank that does not hold it, or
/// with `to_root_only` rank 0 alone (when it does not hold it already).
std::vector<int> receivers(const ShardPlan& plan, const std::vector<std::vector<bool>>& held,
                           std::size_t item, bool to_root_only);

}  // namespace hipacm::cli
