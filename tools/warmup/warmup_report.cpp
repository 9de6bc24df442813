// SPDX-License-Identifier: MIT
// warmup_report.cpp - formats warmup outcomes: summary table, failures, JSON report.
#include "tools/warmup/warmup_report.h"

#include <fmt/core.h>
#include <hipacm/hipacm.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tools/common/terminal_text.h"

namespace hipacm::cli {
namespace {

// The loaded plugin's release, as its function table names it.
std::string plugin_version() {
  const hipacm_provider* provider = hipacm_get_provider(HIPACM_ABI_VERSION);
  return provider != nullptr ? provider->version : "unknown";
}

void add(WarmupTotals* totals, const KernelOutcome& outcome) {
  ++totals->kernels;
  if (outcome.status != HIPACM_SUCCESS) {
    ++totals->failed;
  } else if (outcome.from_cache) {
    ++totals->cache_hits;
  } else {
    ++totals->compiled;
    totals->compile_seconds += outcome.compile_seconds;
  }
}

// The first column fits the longest arch name ("gfx90a:sramecc+:xnack-" is 22 characters).
void print_row(std::FILE* out, std::size_t width, const std::string& name, const WarmupTotals& t) {
  fmt::print(out, "{:<{}} {:>8} {:>11} {:>9} {:>7} {:>8.2f}\n", printable(name), width, t.kernels,
             t.cache_hits, t.compiled, t.failed, t.wall_seconds);
}

// Compiler runs: what compiled and what failed without coming from a stored failure.
std::size_t compiler_runs(const WarmupTotals& totals, const WarmupResult& result) {
  const std::size_t from_cache =
      result.failed_from_cache ? static_cast<std::size_t>(*result.failed_from_cache) : 0;
  return totals.compiled + totals.failed - std::min(totals.failed, from_cache);
}

nlohmann::ordered_json serial_json(const WarmupResult& parallel, const WarmupResult* serial) {
  if (serial == nullptr) return nullptr;
  const WarmupTotals totals = totals_of(*serial);
  const std::optional<double> ratio = measured_ratio(parallel, *serial);
  return {{"kernels", totals.kernels},
          {"compiled", totals.compiled},
          {"failed", totals.failed},
          {"wall_seconds", totals.wall_seconds},
          {"ratio", ratio ? nlohmann::ordered_json(*ratio) : nlohmann::ordered_json(nullptr)}};
}

}  // namespace

WarmupTotals totals_of(const WarmupResult& result) {
  WarmupTotals totals;
  for (const KernelOutcome& outcome : result.outcomes) add(&totals, outcome);
  totals.wall_seconds = result.wall_seconds;
  return totals;
}

std::optional<double> measured_ratio(const WarmupResult& parallel, const WarmupResult& serial) {
  const WarmupTotals p = totals_of(parallel);
  if (p.cache_hits > 0 || p.kernels == 0 || parallel.wall_seconds <= 0) return std::nullopt;
  return serial.wall_seconds / parallel.wall_seconds;
}

void print_summary(std::FILE* out, const WarmupResult& result, const RunFacts& facts) {
  std::vector<std::string> arch_order;
  std::map<std::string, WarmupTotals> per_arch;
  for (const KernelOutcome& outcome : result.outcomes) {
    if (!per_arch.count(outcome.arch)) arch_order.push_back(outcome.arch);
    add(&per_arch[outcome.arch], outcome);
  }
  const WarmupTotals total = totals_of(result);
  std::size_t width = 10;
  for (const std::string& arch : arch_order) width = std::max(width, printable(arch).size());
  fmt::print(out, "{:<{}} {:>8} {:>11} {:>9} {:>7} {:>8}\n", "arch", width, "kernels", "cache hits",
             "compiled", "failed", "wall s");
  for (const auto& [arch, seconds] : result.arch_wall_seconds)
    per_arch[arch].wall_seconds = seconds;
  for (const std::string& arch : arch_order) print_row(out, width, arch, per_arch[arch]);
  print_row(out, width, "total", total);
  fmt::print(out, "{} compiler runs in {:.2f} s wall, up to {} at a time per arch\n",
             compiler_runs(total, result), total.wall_seconds,
             parallel_compiles(facts.settings->jobs));
  if (result.remote_hits && (*result.remote_hits > 0 || !facts.settings->remote_cache.empty()))
    fmt::print(
        out, "{} served from the remote cache {}{}\n", *result.remote_hits,
        printable(facts.settings->remote_cache),
        result.remote_waits && *result.remote_waits > 0
            ? fmt::format(" ({} after waiting for another machine's compile)", *result.remote_waits)
            : "");
  if (result.failed_from_cache && *result.failed_from_cache > 0)
    fmt::print(out, "{} failed from stored failures (--cache-failures), without compiling\n",
               *result.failed_from_cache);
  if (facts.serial == nullptr) return;
  const WarmupTotals serial = totals_of(*facts.serial);
  fmt::print(out, "serial run (cache off, 1 at a time): {} compiled, {} failed in {:.2f} s wall\n",
             serial.compiled, serial.failed, serial.wall_seconds);
  if (const std::optional<double> ratio = measured_ratio(result, *facts.serial)) {
    fmt::print(out, "measured: serial {:.2f} s / parallel {:.2f} s = {:.2f}x\n",
               serial.wall_seconds, total.wall_seconds, *ratio);
  } else {
    fmt::print(out,
               "no ratio: the parallel run took {} of {} kernels from the cache "
               "(--no-cache compares compiles with compiles)\n",
               total.cache_hits, total.kernels);
  }
}

void print_kernel_lines(std::FILE* out, const WarmupResult& result) {
  for (const KernelOutcome& outcome : result.outcomes) {
    const char* state = outcome.status != HIPACM_SUCCESS ? "FAILED"
                        : outcome.from_cache             ? "cached"
                                                         : "compiled";
    fmt::print(out, "{:<8} {:<8} {:>8} B {:>7.2f} s  {}\n", state, printable(outcome.arch),
               outcome.code_size, outcome.compile_seconds, printable(outcome.input->label));
  }
}

std::string trim_log(const std::string& log, std::size_t keep) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  const std::size_t total = lines.size();
  // Written so that no keep, however large, overflows: cut only when more than 2 * keep lines.
  const bool cut = total > keep && total - keep > keep;
  std::string text;
  for (std::size_t i = 0; i < total; ++i) {
    if (cut && i == keep) {
      text += fmt::format("... ({} lines omitted) ...\n", total - 2 * keep);
      i = total - keep;
      if (i == total) break;
    }
    text += lines[i] + "\n";
  }
  return text;
}

std::string head_of_log(const std::string& log, std::size_t max_lines, std::size_t max_bytes) {
  std::string text;
  std::size_t at = 0, lines = 0;
  while (at < log.size() && lines < max_lines) {
    const std::size_t newline = log.find('\n', at);
    const std::size_t end = newline == std::string::npos ? log.size() : newline + 1;
    if (text.size() + (end - at) > max_bytes) {
      if (lines == 0) {
        text = log.substr(0, max_bytes) + "\n";
        at = max_bytes;
      }
      break;
    }
    text.append(log, at, end - at);
    at = end;
    ++lines;
  }
  if (at < log.size())
    text += fmt::format("... ({} more bytes of the log left out)\n", log.size() - at);
  return text;
}

void print_failures(std::FILE* out, const WarmupResult& result, std::size_t keep_lines) {
  for (const KernelOutcome& outcome : result.outcomes) {
    if (outcome.status == HIPACM_SUCCESS) continue;
    fmt::print(out, "FAILED {} [{}]: {}: {}\n", printable(outcome.input->label),
               printable(outcome.arch), hipacm_status_string(outcome.status),
               printable(outcome.error));
    const std::string log = trim_log(outcome.log, keep_lines);
    if (!log.empty()) {
      std::istringstream in(log);
      for (std::string line; std::getline(in, line);) fmt::print(out, "    {}\n", printable(line));
    }
  }
}

nlohmann::ordered_json warmup_report_json(const WarmupResult& result, const RunFacts& facts) {
  const WarmupSettings& settings = *facts.settings;
  const WarmupTotals totals = totals_of(result);
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelOutcome& outcome : result.outcomes) {
    const bool ok = outcome.status == HIPACM_SUCCESS;
    kernels.push_back(
        {{"path", outcome.input->path},
         {"label", outcome.input->label},
         {"options", outcome.input->options},
         {"arch", outcome.arch},
         {"key", outcome.key},
         {"status", ok ? "ok" : "failed"},
         {"status_code", hipacm_status_string(outcome.status)},
         {"from_cache", outcome.from_cache},
         {"code_size", outcome.code_size},
         {"compile_seconds", outcome.compile_seconds},
         {"error", ok ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(outcome.error)},
         {"log",
          ok ? nlohmann::ordered_json(nullptr)
             : nlohmann::ordered_json(head_of_log(outcome.log, kReportLogLines, kReportLogBytes))},
         {"kernels", outcome.kernels}});
  }
  return {{"schema", kWarmupReportSchema},
          {"hipacm_version", plugin_version()},
          {"archs", settings.archs},
          {"jobs", settings.jobs},
          {"max_parallel", parallel_compiles(settings.jobs)},
          {"common_options", facts.common_options},
          {"timeout_seconds", settings.timeout_ms / 1000.0},
          {"cache", settings.no_cache ? "off" : "default"},
          {"cache_failures", settings.cache_failures},
          {"cache_dir", settings.cache_dir.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(settings.cache_dir)},
          {"remote_cache", settings.remote_cache.empty()
                               ? nlohmann::ordered_json(nullptr)
                               : nlohmann::ordered_json(settings.remote_cache)},
          {"totals",
           {{"kernels", totals.kernels},
            {"cache_hits", totals.cache_hits},
            {"compiled", totals.compiled},
            {"failed", totals.failed},
            {"failed_from_cache", result.failed_from_cache
                                      ? nlohmann::ordered_json(*result.failed_from_cache)
                                      : nlohmann::ordered_json(nullptr)},
            {"remote_hits", result.remote_hits ? nlohmann::ordered_json(*result.remote_hits)
                                               : nlohmann::ordered_json(nullptr)},
            {"remote_waits", result.remote_waits ? nlohmann::ordered_json(*result.remote_waits)
                                                 : nlohmann::ordered_json(nullptr)},
            {"compile_seconds", totals.compile_seconds},
            {"wall_seconds", totals.wall_seconds}}},
          {"serial", serial_json(result, facts.serial)},
          {"kernels", kernels}};
}

}  // namespace hipacm::cli
