// SPDX-License-Identifier: MIT
// fuzz_cluster_message.cpp - fuzz target: a rank decoding the cache entries or the report another
// rank sent it.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "plugin/cache/store/entry.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/cluster/cluster_messages.h"

namespace {

namespace cache = hipacm::cache;
namespace cli = hipacm::cli;
using hipacm::fuzz::accepted_or_explained;
using hipacm::fuzz::invariant_broken;

// The first byte: bit 0 picks the message (0 entries, 1 a report), the other bits are the job's
// item count (0 to 127), so that a message names items at, below and past the end of the job.
constexpr std::uint8_t kReport = 1;

// The decoder's bound on every time it accepts (`seconds` in cluster_messages.cpp).
bool is_time(double seconds) { return seconds >= 0.0 && seconds < 1e9; }

void check_label(const std::string& s, std::size_t max_bytes, const char* what) {
  if (s.size() > max_bytes)
    invariant_broken(std::string("a decoded ") + what + " is longer than its bound");
}

void check_names(const std::vector<std::string>& names, const char* what) {
  if (names.size() > cli::kMaxNames)
    invariant_broken(std::string("decoded ") + what + " hold more names than the bound");
  for (const std::string& name : names) check_label(name, cache::kMaxLabelBytes, what);
}

bool same_entry(const cache::CacheEntry& a, const cache::CacheEntry& b) {
  return a.info.key == b.info.key && a.info.arch == b.info.arch &&
         a.info.source_name == b.info.source_name && a.info.backend == b.info.backend &&
         a.info.compiler_version == b.info.compiler_version &&
         a.info.plugin_version == b.info.plugin_version && a.info.size == b.info.size &&
         a.info.created_us == b.info.created_us && a.info.last_used_us == b.info.last_used_us &&
         a.info.hits == b.info.hits && a.lowered_names == b.lowered_names &&
         a.expected_kernels == b.expected_kernels && a.log == b.log && a.code == b.code &&
         a.checksum == b.checksum;
}

bool same_outcome(const cli::ItemOutcome& a, const cli::ItemOutcome& b) {
  return a.item == b.item && a.status == b.status && a.from_cache == b.from_cache &&
         a.code_size == b.code_size && a.compile_seconds == b.compile_seconds && a.key == b.key &&
         a.error == b.error && a.log == b.log && a.kernels == b.kernels;
}

bool same_report(const cli::RankReport& a, const cli::RankReport& b) {
  if (a.outcomes.size() != b.outcomes.size()) return false;
  for (std::size_t i = 0; i < a.outcomes.size(); ++i)
    if (!same_outcome(a.outcomes[i], b.outcomes[i])) return false;
  return a.rank == b.rank && a.cache_dir == b.cache_dir &&
         a.arch_wall_seconds == b.arch_wall_seconds &&
         a.compile_wall_seconds == b.compile_wall_seconds && a.wall_seconds == b.wall_seconds &&
         a.entries_sent == b.entries_sent && a.entries_received == b.entries_received &&
         a.duplicates_received == b.duplicates_received &&
         a.rejected_received == b.rejected_received && a.messages_sent == b.messages_sent &&
         a.messages_received == b.messages_received && a.bytes_sent == b.bytes_sent &&
         a.bytes_received == b.bytes_received && a.control_bytes_sent == b.control_bytes_sent &&
         a.missing_after == b.missing_after && a.rejections == b.rejections;
}

void check_entries(const std::vector<cli::EntryForItem>& entries, std::size_t item_count) {
  if (entries.size() > item_count)
    invariant_broken("an entries message was accepted with more entries than the job has items");
  for (const cli::EntryForItem& one : entries) {
    if (one.item >= item_count) invariant_broken("an entry was accepted for an item past the job");
    const cache::CacheEntry& e = one.entry;
    for (const std::string* label :
         {&e.info.key, &e.info.arch, &e.info.source_name, &e.info.backend, &e.info.compiler_version,
          &e.info.plugin_version, &e.checksum})
      check_label(*label, cache::kMaxLabelBytes, "entry label");
    check_label(e.log, cli::kMaxLogBytes, "entry log");
    if (e.code.size() > cli::kMaxCodeBytes)
      invariant_broken("an entry's code was accepted over its bound");
    check_names(e.lowered_names, "lowered names");
    check_names(e.expected_kernels, "expected kernels");
    if (e.info.size != cache::payload_size(e))
      invariant_broken("a decoded entry's size is not its payload size");
  }
}

// What a rank accepted, encoded again as the sender would, decodes to the same entries.
void round_trip_entries(const std::vector<cli::EntryForItem>& entries, std::size_t item_count) {
  std::vector<const cli::EntryForItem*> pointers;
  for (const cli::EntryForItem& one : entries) pointers.push_back(&one);
  const std::vector<std::uint8_t> bytes = cli::encode_entries(pointers);
  const auto decoded = cli::decode_entries(bytes.data(), bytes.size(), item_count);
  if (!decoded)
    invariant_broken("accepted entries, encoded again, are refused: " + decoded.failure().message);
  const std::vector<cli::EntryForItem>& again = decoded.value();
  if (again.size() != entries.size())
    invariant_broken("accepted entries, encoded again, decode to another number of entries");
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (again[i].item != entries[i].item || !same_entry(again[i].entry, entries[i].entry))
      invariant_broken("accepted entries, encoded again, decode to other entries");
}

void check_report(const cli::RankReport& report, std::size_t item_count) {
  if (report.rank < 0) invariant_broken("a report was accepted with a negative rank");
  check_label(report.cache_dir, cache::kMaxLabelBytes, "cache dir");
  if (report.outcomes.size() > item_count)
    invariant_broken("a report was accepted with more outcomes than the job has items");
  for (const cli::ItemOutcome& o : report.outcomes) {
    if (o.item >= item_count) invariant_broken("an outcome was accepted for an item past the job");
    if (o.status < -1000 || o.status > 1000)
      invariant_broken("an outcome was accepted with a status out of range");
    if (!is_time(o.compile_seconds))
      invariant_broken("an outcome was accepted with a compile time out of range");
    check_label(o.key, cache::kMaxLabelBytes, "outcome key");
    check_label(o.error, cli::kMaxReportLogBytes, "outcome error");
    check_label(o.log, cli::kMaxReportLogBytes, "outcome log");
    check_names(o.kernels, "outcome kernels");
  }
  if (report.arch_wall_seconds.size() > cli::kMaxNames)
    invariant_broken("a report was accepted with more arch wall times than the bound");
  for (const auto& [arch, wall] : report.arch_wall_seconds) {
    check_label(arch, cache::kMaxLabelBytes, "wall time's arch");
    if (!is_time(wall))
      invariant_broken("a report was accepted with an arch wall time out of range");
  }
  if (!is_time(report.compile_wall_seconds) || !is_time(report.wall_seconds))
    invariant_broken("a report was accepted with a wall time out of range");
  check_names(report.rejections, "rejections");
}

void round_trip_report(const cli::RankReport& report, std::size_t item_count) {
  const std::vector<std::uint8_t> bytes = cli::encode_report(report);
  const auto again = cli::decode_report(bytes.data(), bytes.size(), item_count);
  if (!again)
    invariant_broken("an accepted report, encoded again, is refused: " + again.failure().message);
  if (!same_report(again.value(), report))
    invariant_broken("an accepted report, encoded again, decodes to another report");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::size_t item_count = selector >> 1;
  const std::uint8_t* message = data + 1;
  const std::size_t message_size = size - 1;
  if ((selector & kReport) == 0) {
    const auto entries = cli::decode_entries(message, message_size, item_count);
    if (!accepted_or_explained(entries, "an entries message was refused without a reason"))
      return 0;
    check_entries(entries.value(), item_count);
    round_trip_entries(entries.value(), item_count);
  } else {
    const auto report = cli::decode_report(message, message_size, item_count);
    if (!accepted_or_explained(report, "a report was refused without a reason")) return 0;
    check_report(report.value(), item_count);
    round_trip_report(report.value(), item_count);
  }
  return 0;
}
