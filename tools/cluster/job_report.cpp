// SPDX-License-Identifier: MIT
// job_report.cpp - merges the ranks' outcomes and prints and writes the job's report.
#include "tools/cluster/job_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "tools/warmup/warmup_report.h"

namespace hipacm::cli {
namespace {

struct RankCounts {
  std::size_t compiled = 0, served = 0, failed = 0;
  std::uint64_t code_bytes = 0;  ///< code produced by its compiles
};

RankCounts counts_of(const RankReport& report) {
  RankCounts counts;
  for (const ItemOutcome& o : report.outcomes) {
    if (o.status != HIPACM_SUCCESS) {
      ++counts.failed;
    } else if (o.from_cache) {
      ++counts.served;
    } else {
      ++counts.compiled;
      counts.code_bytes += o.code_size;
    }
  }
  return counts;
}

}  // namespace

WarmupResult merge_outcomes(const JobFacts& facts) {
  const std::vector<JobItem>& items = *facts.items;
  const std::vector<KernelInput>& inputs = *facts.job->inputs;
  std::vector<std::optional<KernelOutcome>> by_item(items.size());
  std::map<std::string, double> arch_wall;
  WarmupResult merged;
  for (const RankReport& rank : facts.ranks) {
    for (const ItemOutcome& o : rank.outcomes) {
      if (by_item.at(o.item))
        throw std::runtime_error(
            fmt::format("item {} was reported twice (rank {})", o.item, rank.rank));
      KernelOutcome outcome;
      outcome.input = &inputs.at(items[o.item].input);
      outcome.arch = items[o.item].arch;
      outcome.key = o.key;
      outcome.status = static_cast<hipacm_status>(o.status);
      outcome.from_cache = o.from_cache;
      outcome.code_size = static_cast<std::size_t>(o.code_size);
      outcome.compile_seconds = o.compile_seconds;
      outcome.error = o.error;
      outcome.log = o.log;
      outcome.kernels = o.kernels;
      by_item[o.item] = std::move(outcome);
    }
    for (const auto& [arch, wall] : rank.arch_wall_seconds)
      arch_wall[arch] = std::max(arch_wall[arch], wall);
  }
  for (std::size_t i = 0; i < by_item.size(); ++i) {
    if (!by_item[i]) throw std::runtime_error(fmt::format("no rank reported item {}", i));
    merged.outcomes.push_back(std::move(*by_item[i]));
  }
  for (const std::string& arch : facts.job->settings.archs)
    if (arch_wall.count(arch)) merged.arch_wall_seconds.emplace_back(arch, arch_wall[arch]);
  merged.wall_seconds = facts.wall_seconds;
  return merged;
}

std::vector<int> incomplete_ranks(const JobFacts& facts, const WarmupResult& merged) {
  // With --gather-to-root only rank 0's export is filled; the caches keep what they had.
  std::vector<int> out;
  if (!facts.job->gather_to_root.empty()) return out;
  const std::size_t failed = totals_of(merged).failed;
  for (const RankReport& rank : facts.ranks)
    if (rank.missing_after > failed) out.push_back(rank.rank);
  return out;
}

void print_rank_table(std::FILE* out, const JobFacts& facts, const WarmupResult& merged) {
  (void)merged;
  fmt::print(out, "{:<5} {:>8} {:>7} {:>7} {:>6} {:>9} {:>11} {:>11} {:>8}\n", "rank", "compiled",
             "served", "failed", "sent", "received", "bytes out", "bytes in", "wall s");
  std::uint64_t code_bytes = 0, exchanged = 0;
  for (const RankReport& rank : facts.ranks) {
    const RankCounts counts = counts_of(rank);
    code_bytes += counts.code_bytes;
    exchanged += rank.bytes_sent;
    fmt::print(out, "{:<5} {:>8} {:>7} {:>7} {:>6} {:>9} {:>11} {:>11} {:>8.2f}\n", rank.rank,
               counts.compiled, counts.served, counts.failed, rank.entries_sent,
               rank.entries_received, rank.bytes_sent, rank.bytes_received, rank.wall_seconds);
  }
  fmt::print(out,
             "{} ranks; {} bytes of code compiled, {} bytes exchanged ({}); shared out by {}\n",
             facts.ranks.size(), code_bytes, exchanged,
             facts.job->gather_to_root.empty() ? "every rank gets what it lacks" : "to rank 0 only",
             facts.cost_basis);
}

nlohmann::ordered_json job_report_json(const JobFacts& facts, const WarmupResult& merged) {
  RunFacts run_facts;
  run_facts.settings = &facts.job->settings;
  run_facts.common_options = facts.job->common_options;
  nlohmann::ordered_json report = warmup_report_json(merged, run_facts);
  // Each rank has its own cache directory: the rows say which.
  report["cache_dir"] = nullptr;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  std::uint64_t code_bytes = 0, bytes_exchanged = 0, messages = 0, control = 0;
  for (const RankReport& rank : facts.ranks) {
    const RankCounts counts = counts_of(rank);
    code_bytes += counts.code_bytes;
    bytes_exchanged += rank.bytes_sent;
    messages += rank.messages_sent;
    control += rank.control_bytes_sent;
    const std::size_t r = static_cast<std::size_t>(rank.rank);
    ranks.push_back({{"rank", rank.rank},
                     {"cache_dir", rank.cache_dir},
                     {"compiled", counts.compiled},
                     {"served_from_cache", counts.served},
                     {"failed", counts.failed},
                     {"code_bytes", counts.code_bytes},
                     {"planned_cost", r < facts.planned_load.size() ? facts.planned_load[r] : 0.0},
                     {"compile_seconds", rank.compile_wall_seconds},
                     {"seconds", rank.wall_seconds},
                     {"sent", rank.entries_sent},
                     {"received", rank.entries_received},
                     {"received_duplicates", rank.duplicates_received},
                     {"received_rejected", rank.rejected_received},
                     {"rejections", rank.rejections},
                     {"messages_sent", rank.messages_sent},
                     {"messages_received", rank.messages_received},
                     {"bytes_sent", rank.bytes_sent},
                     {"bytes_received", rank.bytes_received},
                     {"control_bytes_sent", rank.control_bytes_sent},
                     {"missing_after", rank.missing_after}});
  }
  const std::vector<int> incomplete = incomplete_ranks(facts, merged);
  report["mpi"] = {
      {"ranks", facts.ranks.size()},
      {"items", facts.items->size()},
      {"gather_to_root", facts.job->gather_to_root.empty()
                             ? nlohmann::ordered_json(nullptr)
                             : nlohmann::ordered_json(facts.job->gather_to_root)},
      {"gathered", facts.job->gather_to_root.empty() ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(facts.gathered)},
      {"cost_basis", facts.cost_basis},
      {"held_before", facts.held_before},
      {"code_bytes", code_bytes},
      {"bytes_exchanged", bytes_exchanged},
      {"messages_exchanged", messages},
      {"exchange_rounds", facts.exchange_rounds},
      {"control_bytes", control},
      {"incomplete_ranks", incomplete},
      {"per_rank", ranks}};
  return report;
}

}  // namespace hipacm::cli
