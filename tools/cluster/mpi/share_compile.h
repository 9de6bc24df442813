// SPDX-License-Identifier: MIT
// share_compile.h - step 4: this rank compiles its share; rank 0 draws the job's progress.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/cluster/shard_plan.h"
#include "tools/warmup/warmup_job.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli::cluster_steps {

/// Warns on stderr, once per rank, when this rank's CPU affinity is narrower than the workers
/// it would compile with (`jobs` as --jobs gives it).
void warn_about_a_narrow_binding(int rank, std::uint32_t jobs);

/// Runs the items whose provider is this rank through the ordinary warmup; its progress goes to
/// rank 0, which draws the job's until every rank has finished. Outcomes come in compile order.
WarmupResult compile_share(Cluster& cluster, const WarmupJob& job, const ShardPlan& plan,
                           std::size_t count);

}  // namespace hipacm::cli::cluster_steps
