// SPDX-License-Identifier: MIT
// job_finish.h - step 6: each rank's report, and rank 0's report of the job and its status.
#pragma once

#include <vector>

#include "tools/cluster/cluster_messages.h"
#include "tools/cluster/job_report.h"
#include "tools/cluster/mpi/cluster_steps.h"
#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/cluster/shard_plan.h"
#include "tools/warmup/warmup_job.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli::cluster_steps {

/// This rank's outcomes (logs cut to kMaxReportLogBytes) and compile times, for rank 0.
RankReport report_of(const Cluster& cluster, const WarmupJob& job, const ShardPlan& plan,
                     const WarmupResult& result);

/// Copies the traffic this rank caused into its report.
void count_traffic(const Traffic& traffic, RankReport* report);

/// Rank 0: decodes every rank's report into `facts`, prints the merged result, the failures, the
/// per-rank table and the refusals, writes --json, and returns the job's exit status.
int finish_on_root(Cluster& cluster, const WarmupJob& job, JobFacts facts,
                   const std::vector<Bytes>& reports);

}  // namespace hipacm::cli::cluster_steps
