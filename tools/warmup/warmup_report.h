// SPDX-License-Identifier: MIT
// warmup_report.h - the warmup summary table, failure logs, and the versioned JSON report.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/warmup/warmup_run.h"

namespace hipacm::cli {

inline constexpr const char* kWarmupReportSchema = "hipacm-warmup-report-2";
/// What the JSON report keeps of a failed compile's log.
inline constexpr std::size_t kReportLogLines = 40;
inline constexpr std::size_t kReportLogBytes = 8 * 1024;

struct WarmupTotals {
  std::size_t kernels = 0;
  std::size_t cache_hits = 0;
  std::size_t compiled = 0;  ///< succeeded without the cache
  std::size_t failed = 0;
  /// Summed over the compiled ones. Compiles that ran side by side slowed each other, so this is
  /// not what they would take one at a time.
  double compile_seconds = 0.0;
  double wall_seconds = 0.0;
};

WarmupTotals totals_of(const WarmupResult& result);

/// What the run was told besides its inputs, for the summary and the report.
struct RunFacts {
  const WarmupSettings* settings = nullptr;
  std::vector<std::string> common_options;  ///< -I, -D and --option, as every kernel got them
  /// The serial run of --compare-serial, when there was one.
  const WarmupResult* serial = nullptr;
};

/// The serial run's wall time over the parallel run's: only when the parallel run compiled
/// every kernel too (no cache hits), else the two did not do the same work.
std::optional<double> measured_ratio(const WarmupResult& parallel, const WarmupResult& serial);

/// One row per arch and a total row, then what was measured: compiles, wall time and how many
/// compiles could run at once, and with --compare-serial the serial run and the ratio.
void print_summary(std::FILE* out, const WarmupResult& result, const RunFacts& facts);

/// One line per kernel (-v).
void print_kernel_lines(std::FILE* out, const WarmupResult& result);

/// Each failure with its error and its log, trimmed to the first and last
/// `keep_lines` lines.
void print_failures(std::FILE* out, const WarmupResult& result, std::size_t keep_lines);

/// The first and last `keep` lines of `log`, with a marker for what was cut.
std::string trim_log(const std::string& log, std::size_t keep);

/// The start of `log`: whole lines, at most `max_lines` of them and `max_bytes` in all (a first
/// line longer than that is cut), with a last line saying how much was left out.
std::string head_of_log(const std::string& log, std::size_t max_lines, std::size_t max_bytes);

nlohmann::ordered_json warmup_report_json(const WarmupResult& result, const RunFacts& facts);

}  // namespace hipacm::cli
