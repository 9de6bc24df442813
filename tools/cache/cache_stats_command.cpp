// SPDX-License-Identifier: MIT
// cache_stats_command.cpp - `hipacm cache stats [--reset]`: the cache's totals and what it has
// recorded (hits, misses, errors and passthroughs by kind), laid out like `ccache -s`.
#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/bytes/byte_size.h"
#include "support/settings.h"
#include "tools/cache/cache_options.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {
namespace {

// Hits over all lookups, or nothing when none was recorded.
std::optional<double> hit_rate(const cache::CacheStats& stats) {
  const std::int64_t lookups = stats.recorded_hits + stats.recorded_misses;
  if (lookups <= 0) return std::nullopt;
  return static_cast<double>(stats.recorded_hits) / static_cast<double>(lookups);
}
// The recorded errors and passthroughs by kind: a JSON label and a text label for each counter.
struct CounterKind {
  cache::Counter counter;
  const char* json;
  const char* text;
};
constexpr CounterKind kErrorKinds[] = {
    {cache::Counter::kCompileErrors, "compilation", "compilation"},
    {cache::Counter::kCrashErrors, "compiler_crashed", "compiler crashed"},
    {cache::Counter::kTimeoutErrors, "timed_out", "timed out"},
    {cache::Counter::kOtherErrors, "other", "other"},
};
constexpr CounterKind kPassthroughKinds[] = {
    {cache::Counter::kUncacheable, "uncacheable", "uncacheable"},
    {cache::Counter::kUnknownCompiler, "no_compiler_version", "no compiler version"},
};

template <std::size_t N>
std::int64_t sum_of(const cache::Counts& counts, const CounterKind (&kinds)[N]) {
  std::int64_t total = 0;
  for (const CounterKind& kind : kinds) total += cache::at(counts, kind.counter);
  return total;
}

template <std::size_t N>
nlohmann::ordered_json kinds_json(const cache::Counts& counts, const CounterKind (&kinds)[N]) {
  nlohmann::ordered_json out = {{"total", sum_of(counts, kinds)}};
  for (const CounterKind& kind : kinds) out[kind.json] = cache::at(counts, kind.counter);
  return out;
}

// The counters beyond hits and misses, as stats and --reset both write them.
nlohmann::ordered_json outcome_json(const cache::Counts& counts) {
  return {{"stored_failure_hits", cache::at(counts, cache::Counter::kFailureHits)},
          {"errors", kinds_json(counts, kErrorKinds)},
          {"passthroughs", kinds_json(counts, kPassthroughKinds)}};
}

// `label` and a count, indented by `depth`, in the stats' second column.
void print_count(int depth, const std::string& label, std::int64_t count,
                 const std::string& note = "") {
  const std::string indented = std::string(static_cast<std::size_t>(depth) * 2, ' ') + label;
  fmt::print("{:<24}{:>8}{}\n", indented, count, note.empty() ? "" : "  " + note);
}

template <std::size_t N>
void print_kinds(const char* label, const cache::Counts& counts, const CounterKind (&kinds)[N]) {
  print_count(1, label, sum_of(counts, kinds));
  for (const CounterKind& kind : kinds) print_count(2, kind.text, cache::at(counts, kind.counter));
}

// The lookups the hosts recorded, laid out as a tree of counts with their shares.
void print_lookups(const cache::RecordedCounts& recorded, bool quiet) {
  const cache::Counts& counts = recorded.counts;
  // A heading, which -q leaves out with the others.
  if (!quiet)
    fmt::print("\nrecorded since {}\n", recorded.zeroed_us > 0
                                            ? utc_time(recorded.zeroed_us) + " UTC (zeroed)"
                                            : std::string("the cache was made"));
  const std::int64_t hits = cache::at(counts, cache::Counter::kHits);
  const std::int64_t misses = cache::at(counts, cache::Counter::kMisses);
  const auto share = [&](std::int64_t n) {
    return hits + misses > 0 ? fmt::format("({:.1f}%)", 100.0 * static_cast<double>(n) /
                                                            static_cast<double>(hits + misses))
                             : std::string();
  };
  print_count(1, "hits", hits, share(hits));
  print_count(1, "misses", misses, share(misses));
  print_count(1, "stored failures served", cache::at(counts, cache::Counter::kFailureHits));
  print_kinds("errors", counts, kErrorKinds);
  print_kinds("passthroughs", counts, kPassthroughKinds);
}

// `stats --reset`: zeroes what stats counts, in one transaction, and says what it was.
int run_reset(const CacheOptions& options) {
  const std::string path = database_path(options);
  cache::CounterReset reset;
  try {
    cache::CacheAdmin admin = open_existing_cache(options);
    reset = admin.reset_stats();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("cannot zero the statistics of {}: {} (nothing was changed)",
                                 printable(path), e.what()));
  }
  const cache::Counts& counts = reset.counts;
  nlohmann::ordered_json zeroed = {{"hits", cache::at(counts, cache::Counter::kHits)},
                                   {"misses", cache::at(counts, cache::Counter::kMisses)}};
  zeroed.update(outcome_json(counts));
  zeroed["entry_hits"] = reset.entry_hits;
  zeroed["entries_with_hits"] = reset.entries_zeroed;
  report(options, "stats-reset", path,
         {{"zeroed_us", reset.zeroed_us},
          {"reset", zeroed},
          {"kept", {"entries", "payload_bytes", "file_bytes", "stored_failures", "last_used_us"}}},
         [&] {
           fmt::print(
               "zeroed the statistics of {}: {} hits, {} misses, {} stored failures served, {} "
               "errors, {} passthroughs, and the hit counts of {} entries ({} hits)\n",
               printable(path), cache::at(counts, cache::Counter::kHits),
               cache::at(counts, cache::Counter::kMisses),
               cache::at(counts, cache::Counter::kFailureHits), sum_of(counts, kErrorKinds),
               sum_of(counts, kPassthroughKinds), reset.entries_zeroed, reset.entry_hits);
           if (!options.quiet)
             fmt::print(
                 "kept: the entries, their sizes and last uses, and the stored compile "
                 "failures\n");
         });
  return kExitOk;
}

}  // namespace

int run_stats(const CacheOptions& options) {
  if (options.reset) return run_reset(options);
  cache::CacheAdmin admin = inspect_cache(options);
  const cache::CacheStats stats = admin.stats();
  const std::optional<double> rate = hit_rate(stats);
  nlohmann::ordered_json by_arch = nlohmann::ordered_json::array();
  for (const cache::ArchTotals& a : stats.by_arch)
    by_arch.push_back(
        {{"arch", a.arch}, {"entries", a.entries}, {"bytes", a.bytes}, {"hits", a.hits}});
  nlohmann::ordered_json fields = {
      {"entries", stats.entries},
      {"payload_bytes", stats.total_bytes},
      {"max_bytes", stats.max_bytes},
      {"file_bytes", stats.file_bytes},
      {"hits", stats.total_hits},
      {"lookups",
       {{"hits", stats.recorded_hits},
        {"misses", stats.recorded_misses},
        {"hit_rate", rate ? nlohmann::ordered_json(*rate) : nlohmann::ordered_json()}}}};
  fields.update(outcome_json(stats.recorded.counts));
  fields["recorded_since_us"] = stats.recorded.zeroed_us > 0
                                    ? nlohmann::ordered_json(stats.recorded.zeroed_us)
                                    : nlohmann::ordered_json();
  fields["stored_failures"] = stats.stored_failures;
  fields["by_arch"] = by_arch;
  report(options, "stats", stats.path, fields, [&] {
    fmt::print("cache     {}\n", printable(stats.path));
    fmt::print("entries   {}\n", stats.entries);
    fmt::print("size      {} of at most {}{}\n", human_bytes(stats.total_bytes),
               human_bytes(stats.max_bytes),
               options.verbose
                   ? fmt::format(" ({} of {} bytes; {})", stats.total_bytes, stats.max_bytes,
                                 settings::name(settings::Id::kCacheMaxBytes))
                   : "");
    fmt::print("on disk   {}\n", human_bytes(stats.file_bytes));
    if (rate)
      fmt::print("hit rate  {:.1f}% ({} of {} lookups)\n", *rate * 100, stats.recorded_hits,
                 stats.recorded_hits + stats.recorded_misses);
    else
      fmt::print("hit rate  - (no lookups recorded)\n");
    if (stats.stored_failures > 0)
      fmt::print("failures  {} stored compile failures\n", stats.stored_failures);
    print_lookups(stats.recorded, options.quiet);
    if (stats.by_arch.empty()) return;
    std::vector<std::string> archs;
    for (const cache::ArchTotals& a : stats.by_arch) archs.push_back(printable(a.arch));
    const std::size_t width = widest(4, archs);
    if (!options.quiet)
      fmt::print("\n{:<{}}  {:>8} {:>12} {:>8}\n", "arch", width, "entries", "size", "hits");
    for (std::size_t i = 0; i < archs.size(); ++i) {
      const cache::ArchTotals& a = stats.by_arch[i];
      fmt::print("{:<{}}  {:>8} {:>12} {:>8}\n", archs[i], width, a.entries, human_bytes(a.bytes),
                 a.hits);
    }
  });
  return kExitOk;
}

}  // namespace hipacm::cli
