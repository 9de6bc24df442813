// SPDX-License-Identifier: MIT
// shard_plan.cpp - costs from an earlier report or source size, and the longest-first assignment.
#include "tools/cluster/shard_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace hipacm::cli {
namespace {

// FNV-1a: stable across processes and builds, unlike std::hash.
class Fnv1a {
 public:
  void add(const std::string& text) {
    add_bytes(text.data(), text.size());
    const std::uint64_t size = text.size();
    add_bytes(&size, sizeof size);  // length-suffixed: "ab","c" differs from "a","bc"
  }

  std::uint64_t value() const { return hash_; }

 private:
  void add_bytes(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      hash_ ^= bytes[i];
      hash_ *= 1099511628211ull;
    }
  }
  std::uint64_t hash_ = 14695981039346656037ull;
};

double source_bytes(const KernelInput& input) {
  double bytes = static_cast<double>(input.source.size());
  for (const auto& header : input.headers) bytes += static_cast<double>(header.second.size());
  return std::max(bytes, 1.0);
}

}  // namespace

std::vector<JobItem> job_items(const std::vector<KernelInput>& inputs,
                               const std::vector<std::string>& archs) {
  std::vector<JobItem> items;
  for (const std::string& arch : archs)
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].compiles_for(arch)) items.push_back({i, arch});
  return items;
}

std::uint64_t job_fingerprint(const std::vector<KernelInput>& inputs,
                              const std::vector<JobItem>& items) {
  Fnv1a hash;
  for (const JobItem& item : items) {
    const KernelInput& input = inputs.at(item.input);
    hash.add(item.arch);
    hash.add(input.source_name);
    hash.add(input.source);
    for (const std::string& option : input.options) hash.add(option);
    for (const auto& [name, text] : input.headers) {
      hash.add(name);
      hash.add(text);
    }
    for (const std::string& expression : input.name_expressions) hash.add(expression);
  }
  return hash.value();
}

ItemCosts item_costs(const std::vector<KernelInput>& inputs, const std::vector<JobItem>& items,
                     const nlohmann::json* earlier_report) {
  std::map<std::pair<std::string, std::string>, double> seconds;  // (label, arch) -> seconds
  if (earlier_report != nullptr && earlier_report->is_object()) {
    const auto kernels = earlier_report->find("kernels");
    if (kernels != earlier_report->end() && kernels->is_array()) {
      for (const nlohmann::json& row : *kernels) {
        if (!row.is_object()) continue;
        const auto label = row.find("label"), arch = row.find("arch");
        const auto time = row.find("compile_seconds"), cached = row.find("from_cache");
        if (label == row.end() || !label->is_string() || arch == row.end() || !arch->is_string() ||
            time == row.end() || !time->is_number())
          continue;
        // A cache hit's time is the lookup's, not the compile's.
        if (cached != row.end() && cached->is_boolean() && cached->get<bool>()) continue;
        const double value = time->get<double>();
        if (value > 0) seconds[{label->get<std::string>(), arch->get<std::string>()}] = value;
      }
    }
  }
  ItemCosts costs;
  costs.cost.resize(items.size());
  std::vector<double> per_byte;
  std::vector<bool> known(items.size(), false);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const KernelInput& input = inputs.at(items[i].input);
    const auto found = seconds.find({input.label, items[i].arch});
    if (found == seconds.end()) continue;
    costs.cost[i] = found->second;
    known[i] = true;
    ++costs.from_report;
    per_byte.push_back(found->second / source_bytes(input));
  }
  double scale = 1.0;
  if (!per_byte.empty()) {
    std::nth_element(per_byte.begin(), per_byte.begin() + per_byte.size() / 2, per_byte.end());
    scale = per_byte[per_byte.size() / 2];
  }
  for (std::size_t i = 0; i < items.size(); ++i)
    if (!known[i]) costs.cost[i] = source_bytes(inputs.at(items[i].input)) * scale;
  costs.basis = costs.from_report == 0              ? "source bytes"
                : costs.from_report == items.size() ? "report seconds"
                                                    : "report seconds and source bytes";
  return costs;
}

ShardPlan plan_shards(const std::vector<double>& cost, const std::vector<std::vector<bool>>& held) {
  const std::size_t ranks = std::max<std::size_t>(held.size(), 1);
  ShardPlan plan;
  plan.provider.assign(cost.size(), 0);
  plan.compile.assign(cost.size(), true);
  plan.load.assign(ranks, 0.0);
  std::vector<double> work(cost.size());
  for (std::size_t i = 0; i < cost.size(); ++i) {
    for (std::size_t r = 0; r < held.size(); ++r)
      if (held[r].at(i)) plan.compile[i] = false;
    work[i] = plan.compile[i] ? cost[i] : cost[i] * kServeCostShare;
  }
  std::vector<std::size_t> order(cost.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return work[a] > work[b]; });
  for (const std::size_t i : order) {
    int best = -1;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (!plan.compile[i] && !held[r][i]) continue;
      if (best < 0 || plan.load[r] < plan.load[static_cast<std::size_t>(best)])
        best = static_cast<int>(r);
    }
    plan.provider[i] = best;
    plan.load[static_cast<std::size_t>(best)] += work[i];
  }
  return plan;
}

std::vector<int> receivers(const ShardPlan& plan, const std::vector<std::vector<bool>>& held,
                           std::size_t item, bool to_root_only) {
  std::vector<int> out;
  for (std::size_t r = 0; r < held.size(); ++r) {
    if (static_cast<int>(r) == plan.provider.at(item) || held[r].at(item)) continue;
    if (to_root_only && r != 0) continue;
    out.push_back(static_cast<int>(r));
  }
  return out;
}

}  // namespace hipacm::cli
