// SPDX-License-Identifier: MIT
// entry_exchange.cpp - the round budget, outboxes and rounds, and the checks on arrivals.
#include "tools/cluster/mpi/entry_exchange.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "support/bytes/byte_size.h"
#include "support/settings.h"
#include "tools/cluster/mpi/entry_destination.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli::cluster_steps {
namespace {

constexpr std::uint64_t kDefaultRoundBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kMinRoundBytes = std::uint64_t{4} << 10;

/// What one rank sends to one other over the rounds: entries in order, and how far it got.
struct Outbox {
  std::vector<const EntryForItem*> entries;
  std::vector<std::uint64_t> weights;  ///< each entry's bytes in a message of its own
  std::size_t next = 0;

  bool done() const { return next == entries.size(); }
  /// The next message: entries up to `budget` bytes, but at least one, so that an entry larger
  /// than the budget still goes, alone.
  std::vector<const EntryForItem*> take(std::uint64_t budget) {
    std::vector<const EntryForItem*> out;
    std::uint64_t bytes = 0;
    while (!done() && (out.empty() || bytes + weights[next] <= budget)) {
      bytes += weights[next];
      out.push_back(entries[next++]);
    }
    return out;
  }
};

/// Checks one arrived message and stores its entries, each checked by the cache as an import is.
void store_message(const Bytes& message, std::size_t from, const WarmupJob& job,
                   const std::vector<JobItem>& items, const ShardPlan& plan, const CacheMap& map,
                   int rank, Destination& destination, RankReport* report) {
  const bool to_root = !job.gather_to_root.empty();
  Expected<std::vector<EntryForItem>> got =
      decode_entries(message.data(), message.size(), items.size());
  if (!got) {
    ++report->rejected_received;
    report->rejections.push_back(
        fmt::format("from rank {}: a malformed message: {}", from, got.failure().message));
    return;
  }
  for (EntryForItem& entry : got.value()) {
    const JobItem& item = items[entry.item];
    const std::vector<int> expected = receivers(plan, map.held, entry.item, to_root);
    const bool wanted = plan.provider[entry.item] == static_cast<int>(from) &&
                        std::find(expected.begin(), expected.end(), rank) != expected.end();
    if (entry.entry.info.key != map.keys.at(entry.item)) {
      ++report->rejected_received;
      report->rejections.push_back(fmt::format(
          "from rank {}: {} [{}] has another key there than here (another compiler or hipacm "
          "version?)",
          from, job.inputs->at(item.input).label, item.arch));
      continue;
    }
    if (!wanted || entry.entry.info.source_name != job.inputs->at(item.input).source_name) {
      ++report->rejected_received;
      report->rejections.push_back(fmt::format(
          "from rank {}: an entry this rank did not ask for (item {})", from, entry.item));
      continue;
    }
    store_received(report, destination.admin(), std::move(entry), item.arch);
  }
}

}  // namespace

std::uint64_t exchange_round_bytes() {
  const std::optional<std::string> text = settings::mpi_round_bytes();
  if (!text) return kDefaultRoundBytes;
  const std::optional<std::int64_t> bytes = parse_byte_size(*text);
  if (!bytes || static_cast<std::uint64_t>(*bytes) < kMinRoundBytes ||
      static_cast<std::uint64_t>(*bytes) > kMaxMessageBytes)
    throw InputError(
        fmt::format("{} is '{}'; expected a byte count from {} "
                    "to {}, such as 256M",
                    settings::name(settings::Id::kMpiRoundBytes), printable(*text),
                    human_bytes(kMinRoundBytes), human_bytes(kMaxMessageBytes)));
  return static_cast<std::uint64_t>(*bytes);
}

// Sends each compiled or served entry to the ranks that lack it and stores what arrives. The
// exchange runs in rounds: in each, a rank sends every other rank at most its share of
// exchange_round_bytes(), so what a rank holds at once (sent and received) stays near twice that
// however large the job, and no message nears MPI's int counts. Rounds go on while any rank
// has more to send; a job whose entries fit runs one.
std::size_t exchange_entries(Cluster& cluster, const WarmupJob& job,
                             const std::vector<JobItem>& items, const ShardPlan& plan,
                             const CacheMap& map, const WarmupResult& result,
                             std::uint64_t round_bytes, RankReport* report, std::size_t* gathered) {
  const Held& held = map.held;
  const bool to_root = !job.gather_to_root.empty();
  const auto ranks = static_cast<std::size_t>(cluster.size());
  const std::uint64_t per_rank = std::max<std::uint64_t>(1, round_bytes / ranks);
  cache::CacheAdmin own = cache::CacheAdmin::open(database_of(job.settings));
  Destination destination(job, cluster.rank());
  const std::vector<std::size_t> mine = outcome_items(plan, cluster.rank());
  std::vector<EntryForItem> entries;
  std::vector<std::vector<int>> receivers_of;
  for (std::size_t k = 0; k < result.outcomes.size(); ++k) {
    const KernelOutcome& outcome = result.outcomes[k];
    if (outcome.status != HIPACM_SUCCESS) continue;
    std::vector<int> to = receivers(plan, held, mine.at(k), to_root);
    const bool for_export = to_root && cluster.rank() == 0;
    if (to.empty() && !for_export) continue;
    const std::string& key = map.keys.at(mine.at(k));
    std::optional<cache::CacheEntry> entry;
    if (!key.empty()) entry = own.lookup(key);
    if (!entry) {
      report->rejections.push_back(
          fmt::format("{} [{}]: not in this rank's cache after its compile, so not sent",
                      outcome.input->label, outcome.arch));
      continue;
    }
    entries.push_back({mine[k], std::move(*entry)});
    receivers_of.push_back(std::move(to));
  }
  std::vector<Outbox> outboxes(ranks);
  for (std::size_t e = 0; e < entries.size(); ++e) {
    if (receivers_of[e].empty()) continue;
    const std::uint64_t weight = encode_entries({&entries[e]}).size();
    for (const int r : receivers_of[e]) {
      outboxes[static_cast<std::size_t>(r)].entries.push_back(&entries[e]);
      outboxes[static_cast<std::size_t>(r)].weights.push_back(weight);
    }
    report->entries_sent += receivers_of[e].size();
  }
  std::size_t rounds = 0;
  bool more = true;
  while (more) {
    std::vector<Bytes> payloads(ranks);
    bool left = false;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (!outboxes[r].done()) payloads[r] = encode_entries(outboxes[r].take(per_rank));
      left = left || !outboxes[r].done();
    }
    const std::vector<Bytes> arrived = cluster.exchange(payloads);
    payloads.clear();
    ++rounds;
    for (std::size_t from = 0; from < ranks; ++from) {
      if (!arrived[from].empty())
        store_message(arrived[from], from, job, items, plan, map, cluster.rank(), destination,
                      report);
    }
    more = cluster.any(left);
  }
  // Rank 0's own entries go into its export as well.
  if (to_root && cluster.rank() == 0) {
    for (EntryForItem& entry : entries)
      store_received(report, destination.admin(), std::move(entry), items[entry.item].arch);
    destination.admin().export_to(job.gather_to_root);
    // The report says what the file holds, counted in the file itself, not what the job meant
    // to put there.
    *gathered = static_cast<std::size_t>(
        cache::CacheAdmin::open_read_only(job.gather_to_root).stats().entries);
  }
  return rounds;
}

}  // namespace hipacm::cli::cluster_steps
