// SPDX-License-Identifier: MIT
// variant_runner.h - runs one benchmark variant in the current process and measures it.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "kernel_set_dir.h"

namespace hipacm::bench::nvidia {

/// What one run of one variant measured.
struct VariantRun {
  double seconds = 0.0;  ///< wall time: first compile started .. every result collected
  int ok = 0, failed = 0, from_cache = 0;
  long host_peak_kib = 0;      ///< getrusage(RUSAGE_SELF).ru_maxrss
  long worker_peak_kib = 0;    ///< largest VmHWM of one hipacm-worker child
  long workers_total_kib = 0;  ///< largest sum of the workers' VmRSS at one sample
  long workers_seen = 0;
  std::string error;  ///< the first failure's message, "" if none
};
/// The RESULT line a --single child prints: every field under its own name.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(VariantRun, seconds, ok, failed, from_cache, host_peak_kib,
                                   worker_peak_kib, workers_total_kib, workers_seen, error)

/// True for an AMD target ("gfx90a", "gfx90a:xnack-"): the serial rows then compile with hipRTC.
bool is_amd_arch(const std::string& arch);

/// Variant names: "a" (serial NVRTC, or serial hipRTC for an AMD arch), "a-warm" (the same after
/// one untimed compile), "d" (hipacm in-process), "e" (hipacm worker processes), "e-warm" (e after
/// an untimed mode that started and initialized the workers), "ceiling" (run_machine_ceiling:
/// `threads` warmed compiler processes, no hipacm), "cache" (e with a read-write cache in
/// `cache_dir`). `threads` is the pool size. In d, e and cache the host works `host_gap_ms` (one
/// busy core, timed) between entering the mode and its first submit.
VariantRun run_variant(const std::string& variant, const std::vector<SetKernel>& set,
                       const std::string& arch, unsigned threads, const std::string& cache_dir,
                       unsigned host_gap_ms = 0);

}  // namespace hipacm::bench::nvidia
