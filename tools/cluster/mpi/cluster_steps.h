// SPDX-License-Identifier: MIT
// cluster_steps.h - internal: the types and helpers the distributed warmup's steps share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugin/cache/store/location.h"
#include "tools/cluster/shard_plan.h"
#include "tools/warmup/warmup_run.h"

// The steps live in a namespace of their own: they are the parts of run_cluster_warmup(), not
// an interface of the tool, and their short names (Plan, CacheMap, ...) must not meet others.
namespace hipacm::cli::cluster_steps {

using Bytes = std::vector<std::uint8_t>;
/// held[r][i]: rank r's cache holds item i.
using Held = std::vector<std::vector<bool>>;

/// This rank's own cache database, as its --cache-dir (with %r made this rank's) names it.
inline std::string database_of(const WarmupSettings& settings) {
  return cache::database_in(cache::user_cache_dir(settings.cache_dir));
}

/// The item number of each of this rank's outcomes (they come in compile order).
inline std::vector<std::size_t> outcome_items(const ShardPlan& plan, int rank) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.provider.size(); ++i)
    if (plan.provider[i] == rank) out.push_back(i);
  return out;
}

}  // namespace hipacm::cli::cluster_steps
