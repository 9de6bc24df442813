// SPDX-License-Identifier: MIT
// job_report.h - rank 0's view of a distributed warmup: the merged result, the per-rank table,
// and the one JSON report for the whole job.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/cluster/cluster_messages.h"
#include "tools/cluster/shard_plan.h"
#include "tools/warmup/warmup_job.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli {

/// What rank 0 knows of the job besides the ranks' reports.
struct JobFacts {
  const WarmupJob* job = nullptr;
  const std::vector<JobItem>* items = nullptr;
  std::vector<RankReport> ranks;  ///< in rank order
  std::string cost_basis;
  std::vector<double> planned_load;  ///< per rank, in the cost basis's unit
  std::size_t held_before = 0;       ///< (item, rank) pairs already cached before the job
  std::size_t exchange_rounds = 0;   ///< how many rounds the entries took (the same on every rank)
  std::size_t gathered = 0;          ///< with --gather-to-root: the entries the written file holds
  double wall_seconds = 0.0;
};

/// One outcome per item, from the rank that compiled it or served it, in compile order. Throws
/// std::runtime_error when an item has no outcome or more than one.
WarmupResult merge_outcomes(const JobFacts& facts);

/// Ranks whose cache still lacks a kernel that compiled (every failed kernel is missing too).
std::vector<int> incomplete_ranks(const JobFacts& facts, const WarmupResult& merged);

/// One row per rank: compiled, served from its cache, failed, entries sent and received, bytes,
/// seconds; then the bytes exchanged against the bytes of code produced.
void print_rank_table(std::FILE* out, const JobFacts& facts, const WarmupResult& merged);

/// The warmup report of the merged result, plus "mpi": the ranks, the plan and each rank's row.
nlohmann::ordered_json job_report_json(const JobFacts& facts, const WarmupResult& merged);

}  // namespace hipacm::cli
