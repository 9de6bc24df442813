// SPDX-License-Identifier: MIT
// warmup_run.h - compiles kernel inputs for each arch through hipacm modes (via hipacm.hpp).
#pragma once

#include <hipacm/hipacm.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/input/kernel_input.h"
#include "tools/warmup/progress.h"

namespace hipacm::cli {

struct WarmupSettings {
  std::vector<std::string> archs;
  std::uint32_t jobs = 0;        ///< max_workers; 0 = hardware concurrency
  std::uint32_t timeout_ms = 0;  ///< compile_timeout_ms; 0 = none (the command's default is 600 s)
  std::string cache_dir;         ///< "" = the plugin's default resolution
  bool no_cache = false;         ///< HIPACM_CACHE_OFF
  bool cache_failures = false;   ///< hipacm_mode_config.cache_failures
  /// The remote cache the run uses, as shown (RemoteAddress::display): --remote-cache or
  /// $HIPACM_REMOTE_CACHE; "" = none.
  std::string remote_cache;
  /// Which compiles to run, by their place in compile order (arch-major, inputs in order, each
  /// input only for the archs it compiles for); empty = all. A distributed run gives each rank
  /// its share.
  std::vector<bool> only_items;
};

/// The most compiles a mode runs at once: `jobs`, or one per core for 0 (as the plugin reads
/// max_workers).
std::uint32_t parallel_compiles(std::uint32_t jobs);

/// One (kernel, arch) compile as it ended.
struct KernelOutcome {
  const KernelInput* input = nullptr;
  std::string arch;
  std::string key;
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  bool from_cache = false;
  std::size_t code_size = 0;
  double compile_seconds = 0.0;
  std::string error;                 ///< empty on success
  std::string log;                   ///< the compiler log
  std::vector<std::string> kernels;  ///< kernels found in the code object
  std::vector<std::uint8_t> code;    ///< the code object itself
};

struct WarmupResult {
  std::vector<KernelOutcome> outcomes;                            ///< arch-major, inputs in order
  std::vector<std::pair<std::string, double>> arch_wall_seconds;  ///< per mode, in order
  double wall_seconds = 0.0;
  /// Failures served from stored failures (hipacm_stats.cached_failures over the run); nullopt
  /// when the plugin cannot say.
  std::optional<std::uint64_t> failed_from_cache;
  /// Of the cache hits, those served from the remote cache on a local miss
  /// (hipacm_stats.remote_hits over the run), and the compiles served after waiting for another
  /// machine's compile of the same kernel (remote_waits); nullopt when the plugin cannot say.
  std::optional<std::uint64_t> remote_hits;
  std::optional<std::uint64_t> remote_waits;
};

/// Checks every input's source and header names against the names the plugin
/// accepts (relative, no "..", a conservative character set), so that a bad
/// name is an input error before anything compiles. Throws InputError.
void check_request_names(const std::vector<KernelInput>& inputs);

/// Enters (and at once leaves) a mode for every arch, so that a missing
/// backend or an unknown arch is reported before anything compiles.
/// Throws BackendUnavailable or InputError (unknown arch).
void check_archs(const WarmupSettings& settings);

/// A cache the user named (--cache-dir, or $HIPACM_CACHE_DIR) must be usable when the run
/// would write it: created if missing, a directory of this user's that no one else may write,
/// its database (if there) a regular file. Throws InputError (exit 2) naming what is wrong. The
/// default location keeps the plugin's quiet fallback (one warning, no cache). A distributed
/// run calls it on every rank, with that rank's directory.
void check_named_cache(const WarmupSettings& settings);

/// How many compiles run_warmup() makes: every input for every arch it compiles for (all of
/// them, whatever `only_items` selects).
std::size_t compile_count(const std::vector<KernelInput>& inputs,
                          const std::vector<std::string>& archs);

/// One mode per arch, in order, each with every input it compiles for submitted at once.
/// Never throws for a failed compile: that is an outcome. A request the plugin
/// refuses at submit (HIPACM_ERROR_INVALID_ARGUMENT) is bad input: InputError.
WarmupResult run_warmup(const std::vector<KernelInput>& inputs, const WarmupSettings& settings,
                        Progress& progress);

}  // namespace hipacm::cli
