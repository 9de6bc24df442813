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

inline constexpr const char* kWarmupReportSchema = "hipacm-warmup-report-1";

struct WarmupTotals {
  std::size_t kernels = 0;
  std::size_t cache_hits = 0;
  std::size_t compiled = 0;  ///< succeeded without the cache
  std::size_t failed = 0;
  double compile_seconds = 0.0;  ///< summed over the compiled ones
  double wall_seconds = 0.0;
  /// compile_seconds / wall_seconds: what the parallel pool bought over one
  /// compile at a time; unknown when nothing compiled or something failed.
  std::optional<double> speedup;
};

WarmupTotals totals_of(const WarmupResult& result);

/// One row per arch and a total row, then the speedup line.
void print_summary(std::FILE* out, const WarmupResult& result);

/// One line per kernel (-v).
void print_kernel_lines(std::FILE* out, const WarmupResult& result);

/// Each failure with its error and its log, trimmed to the first and last
/// `keep_lines` lines.
void print_failures(std::FILE* out, const WarmupResult& result, std::size_t keep_lines);

/// The first and last `keep` lines of `log`, with a marker for what was cut.
std::string trim_log(const std::string& log, std::size_t keep);

nlohmann::ordered_json warmup_report_json(const WarmupResult& result,
                                          const WarmupSettings& settings);

}  // namespace hipacm::cli
