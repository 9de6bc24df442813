// SPDX-License-Identifier: MIT
// rank_plan.h - step 3: rank 0 plans who compiles or serves each item; every rank takes it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/cluster/mpi/cluster_steps.h"
#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/cluster/shard_plan.h"
#include "tools/warmup/warmup_job.h"

namespace hipacm::cli::cluster_steps {

struct Plan {
  ShardPlan shards;
  std::string cost_basis;
};

/// Gathering to rank 0 (--gather-to-root): what rank 0 holds it serves itself, since only it can
/// read its cache, so no other holder is counted for those items. Nothing otherwise.
void root_serves_what_it_holds(const WarmupJob& job, std::size_t count, Held* held);

/// Rank 0 reads the costs (--costs) and plans with plan_shards(); every rank gets its plan,
/// checked, with `compile` set for the items no rank holds. JobLost for a malformed plan.
Plan agree_on_plan(Cluster& cluster, const WarmupJob& job, const std::vector<JobItem>& items,
                   const Held& held);

}  // namespace hipacm::cli::cluster_steps
