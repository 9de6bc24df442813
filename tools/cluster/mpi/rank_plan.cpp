// SPDX-License-Identifier: MIT
// rank_plan.cpp - rank 0's plan (from --costs or source sizes), broadcast and checked.
#include "tools/cluster/mpi/rank_plan.h"

#include <fmt/core.h>

#include <cstddef>
#include <optional>

#include <nlohmann/json.hpp>

#include "tools/cluster/bounded_cbor.h"
#include "tools/common/terminal_text.h"
#include "tools/input/bounded_json.h"
#include "tools/input/input_files.h"

namespace hipacm::cli::cluster_steps {
namespace {

std::optional<nlohmann::json> read_costs(const std::string& file) {
  if (file.empty()) return std::nullopt;
  // A regular file of at most a manifest's size, read without blocking (a FIFO cannot hang the
  // job), as every file the CLI reads.
  const std::string text = read_input_file(file, kMaxManifestFileBytes);
  std::string label = "--costs ";
  label += printable(file);
  return parse_bounded_json(text, label, "not a JSON report");
}

}  // namespace

void root_serves_what_it_holds(const WarmupJob& job, std::size_t count, Held* held_ptr) {
  Held& held = *held_ptr;
  if (!job.gather_to_root.empty())
    for (std::size_t i = 0; i < count; ++i)
      if (held[0][i])
        for (std::size_t r = 1; r < held.size(); ++r) held[r][i] = false;
}

// Rank 0 reads the costs and decides; the others take its plan, so a report file only rank 0 can
// read is enough, and no two ranks can plan differently.
Plan agree_on_plan(Cluster& cluster, const WarmupJob& job, const std::vector<JobItem>& items,
                   const Held& held) {
  Plan plan;
  nlohmann::json message;
  if (cluster.rank() == 0) {
    const std::optional<nlohmann::json> report = read_costs(job.costs_file);
    const ItemCosts costs = item_costs(*job.inputs, items, report ? &*report : nullptr);
    message = {{"provider", plan_shards(costs.cost, held).provider},
               {"load", plan_shards(costs.cost, held).load},
               {"basis", costs.basis}};
  }
  const Bytes bytes =
      cluster.broadcast(cluster.rank() == 0 ? nlohmann::json::to_cbor(message) : Bytes{});
  try {
    Expected<nlohmann::json> parsed = parse_bounded_cbor(bytes.data(), bytes.size());
    if (!parsed) throw JobLost("rank 0 sent a malformed plan: " + parsed.failure().message);
    message = std::move(parsed).value();
    plan.shards.provider = message.at("provider").get<std::vector<int>>();
    plan.shards.load = message.at("load").get<std::vector<double>>();
    plan.cost_basis = message.at("basis").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw JobLost(fmt::format("rank 0 sent a malformed plan: {}", e.what()));
  }
  if (plan.shards.provider.size() != items.size())
    throw JobLost("rank 0 sent a plan for another number of items");
  plan.shards.compile.assign(items.size(), true);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int provider = plan.shards.provider[i];
    if (provider < 0 || provider >= cluster.size()) throw JobLost("rank 0 sent a bad plan");
    for (const std::vector<bool>& rank : held)
      if (rank[i]) plan.shards.compile[i] = false;
  }
  return plan;
}

}  // namespace hipacm::cli::cluster_steps
