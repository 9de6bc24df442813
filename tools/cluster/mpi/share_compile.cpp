// SPDX-License-Identifier: MIT
// share_compile.cpp - this rank's share, its progress to rank 0, and the CPU-binding warning.
#include "tools/cluster/mpi/share_compile.h"

#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "support/settings.h"
#include "tools/warmup/progress.h"

namespace hipacm::cli::cluster_steps {
namespace {

// Tests stop one rank in the middle of its compiles, as a crash or an out-of-memory kill would.
// Like the worker's fault hooks, it is a test hook (settings.h), so that one stray setting alone
// never stops a real job.
bool dies_here(int rank) {
  const std::optional<std::string> value = settings::mpi_test_die_rank();
  return value && *value == std::to_string(rank);
}

}  // namespace

/// Launchers bind ranks to cores (Open MPI binds each rank of a one- or two-rank job to one core;
/// srun gives a task one CPU unless asked for more), and a rank's workers inherit the binding: its
/// compiles would then take turns on those CPUs. Say so, once per rank, instead of being slow.
void warn_about_a_narrow_binding(int rank, std::uint32_t jobs) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0) return;
  const int usable = CPU_COUNT(&cpus);
  const std::uint32_t workers = parallel_compiles(jobs);
  if (usable <= 0 || static_cast<std::uint32_t>(usable) >= workers) return;
  fmt::print(stderr,
             "hipacm: warning: rank {} may run on {} CPU{} only (its CPU affinity), but compiles "
             "with up to {} workers, which would take turns on {}; start the ranks unbound "
             "(mpirun --bind-to none) or give each the node's cores (srun --cpus-per-task)\n",
             rank, usable, usable == 1 ? "" : "s", workers, usable == 1 ? "it" : "them");
}

// This rank's share: its items run through the ordinary warmup, whose progress goes to rank 0,
// which draws the whole job's.
WarmupResult compile_share(Cluster& cluster, const WarmupJob& job, const ShardPlan& plan,
                           std::size_t count) {
  WarmupSettings settings = job.settings;
  settings.only_items.assign(count, false);
  std::size_t mine = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (plan.provider[i] == cluster.rank()) settings.only_items[i] = true, ++mine;
  Progress local(stderr, ProgressLook{ProgressStyle::kNone, false, 80}, mine);
  std::optional<Progress> whole;
  if (cluster.rank() == 0) whole.emplace(stderr, choose_progress_look(stderr, job.quiet), count);
  const std::string label = fmt::format("{} ranks", cluster.size());
  const bool die = dies_here(cluster.rank());
  local.set_listener([&](std::size_t done, std::size_t failed) {
    if (die && done > 0) ::_exit(86);
    cluster.report_progress(done, failed, false);
    if (whole) whole->update(cluster.job_done(), cluster.job_failed(), label);
  });
  WarmupResult result = run_warmup(*job.inputs, settings, local);
  std::size_t failed = 0;
  for (const KernelOutcome& outcome : result.outcomes)
    failed += outcome.status == HIPACM_SUCCESS ? 0 : 1;
  local.set_listener(nullptr);
  cluster.report_progress(result.outcomes.size(), failed, true);
  if (whole) {
    cluster.wait_for_all_finished(
        [&] { whole->update(cluster.job_done(), cluster.job_failed(), label); });
    whole->update(cluster.job_done(), cluster.job_failed(), label);
    whole->finish();
  }
  return result;
}

}  // namespace hipacm::cli::cluster_steps
