// SPDX-License-Identifier: MIT
// dry_run.h - `warmup --dry-run`: which kernels the cache already holds, without compiling any.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/input/kernel_input.h"
#include "tools/warmup/warmup_run.h"

namespace hipacm::cli {

/// One (kernel, arch) as a warm run would meet it.
struct DryRunEntry {
  const KernelInput* input = nullptr;
  std::string arch;
  bool cached = false;  ///< a valid entry for it is in the cache now
  std::string key;      ///< its key in the cache; "" when it is not cached at all
};

/// Looks every kernel up for every arch (arch-major, inputs in order) in the cache the run would
/// use, read-only, through the plugin's own cache code: the same keys, layers and entry checks
/// as a real run's lookups. Nothing compiles and nothing is written. With `settings.no_cache`
/// every kernel would compile.
std::vector<DryRunEntry> dry_run(const std::vector<KernelInput>& inputs,
                                 const WarmupSettings& settings);

/// One line per (kernel, arch), then the count of each.
void print_dry_run(std::FILE* out, const std::vector<DryRunEntry>& entries);

nlohmann::ordered_json dry_run_json(const std::vector<DryRunEntry>& entries,
                                    const WarmupSettings& settings);

}  // namespace hipacm::cli
