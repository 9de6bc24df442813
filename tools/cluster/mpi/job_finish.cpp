// SPDX-License-Identifier: MIT
// job_finish.cpp - a rank's report and traffic; rank 0 prints the job and decides its status.
#include "tools/cluster/mpi/job_finish.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "plugin/cache/store/location.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/terminal_text.h"
#include "tools/warmup/warmup_report.h"

namespace hipacm::cli::cluster_steps {

RankReport report_of(const Cluster& cluster, const WarmupJob& job, const ShardPlan& plan,
                     const WarmupResult& result) {
  RankReport report;
  report.rank = cluster.rank();
  report.cache_dir = cache::user_cache_dir(job.settings.cache_dir);
  const std::vector<std::size_t> mine = outcome_items(plan, cluster.rank());
  for (std::size_t k = 0; k < result.outcomes.size(); ++k) {
    const KernelOutcome& o = result.outcomes[k];
    ItemOutcome out;
    out.item = mine.at(k);
    out.status = static_cast<std::int32_t>(o.status);
    out.from_cache = o.from_cache;
    out.code_size = o.code_size;
    out.compile_seconds = o.compile_seconds;
    out.key = o.key;
    out.error = o.error.substr(0, kMaxReportLogBytes);
    out.log = o.log.size() <= kMaxReportLogBytes ? o.log : trim_log(o.log, 200);
    out.log.resize(std::min(out.log.size(), kMaxReportLogBytes));
    out.kernels = o.kernels;
    report.outcomes.push_back(std::move(out));
  }
  report.arch_wall_seconds = result.arch_wall_seconds;
  report.compile_wall_seconds = result.wall_seconds;
  return report;
}

void count_traffic(const Traffic& traffic, RankReport* report) {
  report->messages_sent = traffic.messages_sent;
  report->messages_received = traffic.messages_received;
  report->bytes_sent = traffic.bytes_sent;
  report->bytes_received = traffic.bytes_received;
  report->control_bytes_sent = traffic.control_bytes_sent;
}

int finish_on_root(Cluster& cluster, const WarmupJob& job, JobFacts facts,
                   const std::vector<Bytes>& reports) {
  for (std::size_t r = 0; r < reports.size(); ++r) {
    Expected<RankReport> report =
        decode_report(reports[r].data(), reports[r].size(), facts.items->size());
    if (!report || report->rank != static_cast<std::int32_t>(r))
      throw std::runtime_error(fmt::format("rank {} sent a malformed report: {}", r,
                                           report ? std::string() : report.failure().message));
    facts.ranks.push_back(std::move(report).value());
  }
  (void)cluster;
  const WarmupResult merged = merge_outcomes(facts);
  std::FILE* text = job.json_target == "-" ? stderr : stdout;
  RunFacts run_facts;
  run_facts.settings = &job.settings;
  run_facts.common_options = job.common_options;
  if (job.verbose) print_kernel_lines(text, merged);
  print_failures(stderr, merged, job.log_lines);
  print_summary(text, merged, run_facts);
  print_rank_table(text, facts, merged);
  if (!job.gather_to_root.empty())
    fmt::print(text, "wrote {} code objects to {}\n", facts.gathered,
               printable(job.gather_to_root));
  if (!job.json_target.empty()) write_json(job_report_json(facts, merged), job.json_target);
  int status = kExitOk;
  for (const RankReport& rank : facts.ranks)
    for (const std::string& why : rank.rejections) {
      fmt::print(stderr, "hipacm: rank {}: refused: {}\n", rank.rank, printable(why));
      status = kExitFailures;
    }
  const std::vector<int> incomplete = incomplete_ranks(facts, merged);
  for (const int rank : incomplete) {
    fmt::print(stderr, "hipacm: rank {}: its cache still lacks {} kernels\n", rank,
               facts.ranks[static_cast<std::size_t>(rank)].missing_after);
    status = kExitFailures;
  }
  if (totals_of(merged).failed > 0 && !job.keep_going) status = kExitFailures;
  return status;
}

}  // namespace hipacm::cli::cluster_steps
