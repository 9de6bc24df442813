// SPDX-License-Identifier: MIT
// cluster_warmup.cpp - the distributed warmup's steps, each collective, from plan to report.
#include "tools/cluster/cluster_warmup.h"

#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/store/location.h"
#include "support/byte_size.h"
#include "support/environment.h"
#include "tools/cluster/cluster_messages.h"
#include "tools/cluster/job_report.h"
#include "tools/cluster/mpi_comm.h"
#include "tools/cluster/shard_plan.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/terminal_text.h"
#include "tools/input/bounded_json.h"
#include "tools/input/input_files.h"
#include "tools/warmup/dry_run.h"
#include "tools/warmup/progress.h"
#include "tools/warmup/warmup_report.h"

namespace hipacm::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<std::uint8_t>;
using Held = std::vector<std::vector<bool>>;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Tests stop one rank in the middle of its compiles, as a crash or an out-of-memory kill would.
// Like the worker's fault hooks, it takes a second variable, so that one stray setting alone
// never stops a real job.
bool dies_here(int rank) {
  if (backend::environment_value("HIPACM_MPI_TEST_ENABLE_FAULTS") != "1") return false;
  const std::optional<std::string> value = backend::environment_value("HIPACM_MPI_TEST_DIE_RANK");
  return value && *value == std::to_string(rank);
}

Bytes u64_bytes(std::uint64_t a, std::uint64_t b) {
  Bytes out(16);
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a >> (8 * i));
    out[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(b >> (8 * i));
  }
  return out;
}

std::uint64_t u64_at(const Bytes& bytes, std::size_t at) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<std::uint64_t>(bytes.at(at + static_cast<std::size_t>(i))) << (8 * i);
  return value;
}

// Every rank must have been given the same kernels; a rank that was not would compile and send
// something else under the same item numbers.
void agree_on_items(Cluster& cluster, std::size_t count, std::uint64_t fingerprint) {
  const std::vector<Bytes> all = cluster.all_gather(u64_bytes(count, fingerprint));
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].size() != 16) throw JobLost(fmt::format("rank {} sent a malformed agreement", r));
    if (u64_at(all[r], 0) != count || u64_at(all[r], 8) != fingerprint)
      throw InputError(fmt::format(
          "rank {} was given other kernels than rank {} ({} compiles against {}): every rank "
          "must get the same arguments and files",
          r, cluster.rank(), u64_at(all[r], 0), count));
  }
}

Bytes pack_bits(const std::vector<bool>& bits) {
  Bytes out((bits.size() + 7) / 8, 0);
  for (std::size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) out[i / 8] = static_cast<std::uint8_t>(out[i / 8] | (1u << (i % 8)));
  return out;
}

std::vector<bool> unpack_bits(const Bytes& bytes, std::size_t count, std::size_t rank) {
  if (bytes.size() != (count + 7) / 8)
    throw JobLost(fmt::format("rank {} sent a cache map of the wrong size", rank));
  std::vector<bool> bits(count);
  for (std::size_t i = 0; i < count; ++i) bits[i] = (bytes[i / 8] >> (i % 8)) & 1u;
  return bits;
}

// What the caches hold: held[r][i], rank r's cache holds item i now; and this rank's key of each
// item, which names what it sends and checks what it receives.
struct CacheMap {
  Held held;
  std::vector<std::string> keys;
};

CacheMap what_caches_hold(Cluster& cluster, const WarmupJob& job, std::size_t count) {
  CacheMap map;
  std::vector<bool> mine(count, false);
  const std::vector<DryRunEntry> entries = dry_run(*job.inputs, job.settings);
  if (entries.size() != count) throw std::logic_error("the dry run counted other items");
  for (std::size_t i = 0; i < count; ++i) {
    mine[i] = entries[i].cached;
    map.keys.push_back(entries[i].key);
  }
  const std::vector<Bytes> all = cluster.all_gather(pack_bits(mine));
  for (std::size_t r = 0; r < all.size(); ++r) map.held.push_back(unpack_bits(all[r], count, r));
  return map;
}

std::optional<nlohmann::json> read_costs(const std::string& file) {
  if (file.empty()) return std::nullopt;
  // A regular file of at most a manifest's size, read without blocking (a FIFO cannot hang the
  // job), as every file the CLI reads.
  const std::string text = read_input_file(file, kMaxManifestFileBytes);
  std::string label = "--costs ";
  label += printable(file);
  return parse_bounded_json(text, label, "not a JSON report");
}

struct Plan {
  ShardPlan shards;
  std::string cost_basis;
};

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
    std::string why;
    if (!parse_bounded_cbor(bytes.data(), bytes.size(), &message, &why))
      throw JobLost("rank 0 sent a malformed plan: " + why);
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

// The item number of each of this rank's outcomes (they come in compile order).
std::vector<std::size_t> outcome_items(const ShardPlan& plan, int rank) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.provider.size(); ++i)
    if (plan.provider[i] == rank) out.push_back(i);
  return out;
}

std::string database_of(const WarmupSettings& settings) {
  return cache::database_in(cache::user_cache_dir(settings.cache_dir));
}

// The directory that --gather-to-root FILE's parts are staged in before they become FILE: a new
// one beside FILE, made by mkdtemp (a name no one could know in advance, created 0700, never an
// existing directory), so nothing another user planted there can end up in the export.
class StagingDir {
 public:
  explicit StagingDir(const std::string& file) {
    const std::filesystem::path target(file);
    const std::filesystem::path parent =
        target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
    std::string name = (parent / fmt::format(".{}.parts-XXXXXX", target.filename().string()));
    if (::mkdtemp(name.data()) == nullptr)
      throw std::runtime_error(
          fmt::format("--gather-to-root {}: cannot create a staging "
                      "directory in {}: {}",
                      printable(file), printable(parent.string()), std::strerror(errno)));
    path_ = name;
  }
  ~StagingDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Where received entries go: this rank's cache, or with --gather-to-root rank 0's staging
// cache, which becomes the export file.
class Destination {
 public:
  Destination(const WarmupJob& job, int rank)
      : staging_(job.gather_to_root.empty() || rank != 0
                     ? nullptr
                     : std::make_unique<StagingDir>(job.gather_to_root)),
        admin_(cache::CacheAdmin::open(staging_ ? cache::CacheAdmin::path_in(staging_->path())
                                                : database_of(job.settings))) {}
  Destination(const Destination&) = delete;
  Destination& operator=(const Destination&) = delete;

  cache::CacheAdmin& admin() { return admin_; }

 private:
  std::unique_ptr<StagingDir> staging_;  // declared first: removed after the database is closed
  cache::CacheAdmin admin_;
};

void store_received(RankReport* report, cache::CacheAdmin& admin, EntryForItem&& got,
                    const std::string& arch) {
  std::string why;
  const std::string key = got.entry.info.key;
  switch (admin.import_entry(std::move(got.entry), arch, &why)) {
    case cache::CacheAdmin::Imported::kAccepted:
      ++report->entries_received;
      break;
    case cache::CacheAdmin::Imported::kDuplicate:
      ++report->duplicates_received;
      break;
    case cache::CacheAdmin::Imported::kRejected:
      ++report->rejected_received;
      report->rejections.push_back(fmt::format("{}: {}", key, why));
      break;
  }
}

constexpr std::uint64_t kDefaultRoundBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kMinRoundBytes = std::uint64_t{4} << 10;

/// $HIPACM_MPI_ROUND_BYTES: what one exchange round may send from a rank (and so what a rank
/// receives in one, from all ranks together). Read on every rank; each bounds its own sends.
std::uint64_t exchange_round_bytes() {
  const std::optional<std::string> text = backend::environment_value("HIPACM_MPI_ROUND_BYTES");
  if (!text) return kDefaultRoundBytes;
  const std::optional<std::int64_t> bytes = parse_byte_size(*text);
  if (!bytes || static_cast<std::uint64_t>(*bytes) < kMinRoundBytes ||
      static_cast<std::uint64_t>(*bytes) > kMaxMessageBytes)
    throw InputError(
        fmt::format("HIPACM_MPI_ROUND_BYTES is '{}'; expected a byte count from {} "
                    "to {}, such as 256M",
                    printable(*text), human_bytes(kMinRoundBytes), human_bytes(kMaxMessageBytes)));
  return static_cast<std::uint64_t>(*bytes);
}

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
  std::vector<EntryForItem> got;
  std::string error;
  if (!decode_entries(message.data(), message.size(), items.size(), &got, &error)) {
    ++report->rejected_received;
    report->rejections.push_back(fmt::format("from rank {}: a malformed message: {}", from, error));
    return;
  }
  for (EntryForItem& entry : got) {
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

int finish_on_root(Cluster& cluster, const WarmupJob& job, JobFacts facts,
                   const std::vector<Bytes>& reports) {
  for (std::size_t r = 0; r < reports.size(); ++r) {
    RankReport report;
    std::string error;
    if (!decode_report(reports[r].data(), reports[r].size(), facts.items->size(), &report,
                       &error) ||
        report.rank != static_cast<std::int32_t>(r))
      throw std::runtime_error(fmt::format("rank {} sent a malformed report: {}", r, error));
    facts.ranks.push_back(std::move(report));
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

int run_job(Cluster& cluster, const WarmupJob& job) {
  const auto started = Clock::now();
  warn_about_a_narrow_binding(cluster.rank(), job.settings.jobs);
  // Read before anything is compiled: a bad value should not cost the job its compiles.
  const std::uint64_t round_bytes = exchange_round_bytes();
  const std::vector<JobItem> items = job_items(*job.inputs, job.settings.archs);
  // Each rank's own cache, as its --cache-dir's %r made it: a named one that cannot be used is
  // an error on that rank, which stops the job before anything compiles.
  check_named_cache(job.settings);
  if (cluster.rank() == 0 && !job.gather_to_root.empty()) {
    std::error_code ec;
    if (std::filesystem::symlink_status(job.gather_to_root, ec).type() !=
        std::filesystem::file_type::not_found)
      throw InputError(fmt::format("--gather-to-root {}: already exists; it names a new file",
                                   printable(job.gather_to_root)));
    // The file's directory must be there already: a typo must not quietly make a directory
    // tree (nor a staging directory in it) somewhere unexpected.
    const std::filesystem::path parent = std::filesystem::path(job.gather_to_root).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
      throw InputError(
          fmt::format("--gather-to-root {}: {} is not an existing directory (it is "
                      "not created; make it first)",
                      printable(job.gather_to_root), printable(parent.string())));
  }
  agree_on_items(cluster, items.size(), job_fingerprint(*job.inputs, items));
  CacheMap map = what_caches_hold(cluster, job, items.size());
  Held& held = map.held;
  std::size_t held_before = 0;
  for (const std::vector<bool>& rank : held)
    held_before += static_cast<std::size_t>(std::count(rank.begin(), rank.end(), true));
  // Gathering to rank 0: what rank 0 holds it serves itself, since only it can read its cache.
  if (!job.gather_to_root.empty())
    for (std::size_t i = 0; i < items.size(); ++i)
      if (held[0][i])
        for (std::size_t r = 1; r < held.size(); ++r) held[r][i] = false;
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
  const Traffic& traffic = cluster.traffic();
  report.messages_sent = traffic.messages_sent;
  report.messages_received = traffic.messages_received;
  report.bytes_sent = traffic.bytes_sent;
  report.bytes_received = traffic.bytes_received;
  report.control_bytes_sent = traffic.control_bytes_sent;
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
  try {
    return run_job(cluster, job);
  } catch (const JobLost& e) {
    fmt::print(stderr, "hipacm: error: {}\n", printable(e.what()));
    std::fflush(stderr);
    return kExitFailures;
  } catch (const std::exception& e) {
    // The other ranks wait in a collective that this rank will never join: only an abort ends
    // them, through the launcher, which then stops the job.
    const bool input = dynamic_cast<const InputError*>(&e) != nullptr;
    fmt::print(stderr, "hipacm: error: rank {}: {}\n", cluster.rank(), printable(e.what()));
    std::fflush(stderr);
    cluster.abort_job(input ? kExitUsage : kExitFailures);
  }
}

}  // namespace hipacm::cli
