// SPDX-License-Identifier: MIT
// cluster_warmup.cpp - the distributed warmup's steps in order, and a rank's fatal error.
#include "tools/cluster/mpi/cluster_warmup.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include "tools/cluster/mpi/cluster_steps.h"
#include "tools/cluster/mpi/entry_destination.h"
#include "tools/cluster/mpi/entry_exchange.h"
#include "tools/cluster/mpi/job_agreement.h"
#include "tools/cluster/mpi/job_finish.h"
#include "tools/cluster/mpi/mpi_comm.h"
#include "tools/cluster/mpi/rank_plan.h"
#include "tools/cluster/mpi/rank_services.h"
#include "tools/cluster/mpi/share_compile.h"
#include "tools/cluster/shard_plan.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"
#include "tools/warmup/dry_run.h"

namespace hipacm::cli {
namespace {

using namespace cluster_steps;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int run_job(Cluster& cluster, const WarmupJob& job) {
  const auto started = Clock::now();
  warn_about_a_narrow_binding(cluster.rank(), job.settings.jobs);
  // Read before anything is compiled: a bad value should not cost the job its compiles.
  const std::uint64_t round_bytes = exchange_round_bytes();
  const std::vector<JobItem> items = job_items(*job.inputs, job.settings.archs);
  // Each rank's own cache, as its --cache-dir's %r made it: a named one that cannot be used is
  // an error on that rank, which stops the job before anything compiles.
  check_named_cache(job.settings);
  if (cluster.rank() == 0 && !job.gather_to_root.empty())
    check_gather_to_root_file(job.gather_to_root);
  agree_on_items(cluster, items.size(), job_fingerprint(*job.inputs, items));
  CacheMap map = what_caches_hold(cluster, job, items.size());
  Held& held = map.held;
  std::size_t held_before = 0;
  for (const std::vector<bool>& rank : held)
    held_before += static_cast<std::size_t>(std::count(rank.begin(), rank.end(), true));
  root_serves_what_it_holds(job, items.size(), &held);
  const Plan plan = agree_on_plan(cluster, job, items, held);
  const WarmupResult result = compile_share(cluster, job, plan.shards, items.size());
  RankReport report = report_of(cluster, job, plan.shards, result);
  std::size_t gathered = 0;
  const std::size_t rounds = exchange_entries(cluster, job, items, plan.shards, map, result,
                                              round_bytes, &report, &gathered);
  if (job.gather_to_root.empty()) {
    for (const DryRunEntry& entry : dry_run(*job.inputs, job.settings))
      report.missing_after += entry.cached ? 0 : 1;
  }
  count_traffic(cluster.traffic(), &report);
  report.wall_seconds = seconds_since(started);
  const std::vector<Bytes> reports = cluster.gather_to_root(encode_report(report));
  int status = kExitOk;
  if (cluster.rank() == 0) {
    JobFacts facts;
    facts.job = &job;
    facts.items = &items;
    facts.cost_basis = plan.cost_basis;
    facts.planned_load = plan.shards.load;
    facts.held_before = held_before;
    facts.exchange_rounds = rounds;
    facts.gathered = gathered;
    facts.wall_seconds = seconds_since(started);
    status = finish_on_root(cluster, job, std::move(facts), reports);
  }
  // Every rank ends with the job's status, so the launcher's own status says the same.
  const Bytes decided = cluster.broadcast(Bytes{static_cast<std::uint8_t>(status)});
  return decided.size() == 1 ? static_cast<int>(decided[0]) : static_cast<int>(kExitFailures);
}

}  // namespace

int run_cluster_warmup(const WarmupJob& job) {
  Cluster cluster;
  // Noted before anything compiles, so that only a service this rank's run started is stopped.
  RankServices services;
  const auto stop_services = [&] {
    if (!job.keep_services) services.stop_started();
  };
  try {
    const int status = run_job(cluster, job);
    stop_services();
    return status;
  } catch (const JobLost& e) {
    fmt::print(stderr, "hipacm: error: {}\n", printable(e.what()));
    std::fflush(stderr);
    stop_services();
    return kExitFailures;
  } catch (const std::exception& e) {
    // The other ranks wait in a collective that this rank will never join: only an abort ends
    // them, through the launcher, which then stops the job.
    const bool input = dynamic_cast<const InputError*>(&e) != nullptr;
    fmt::print(stderr, "hipacm: error: rank {}: {}\n", cluster.rank(), printable(e.what()));
    std::fflush(stderr);
    stop_services();
    cluster.abort_job(input ? kExitUsage : kExitFailures);
  }
}

}  // namespace hipacm::cli
