// SPDX-License-Identifier: MIT
// machine_ceiling.h - the fastest this machine compiles a kernel set with N processes: warmed
// compilers in forked processes taking kernels from a shared counter, with no hipacm in between.
#pragma once

#include <string>
#include <vector>

#include "kernel_set_dir.h"
#include "variant_runner.h"

namespace hipacm::bench::nvidia {

/// Forks `processes` children; each loads the compiler (NVRTC, or hipRTC for an AMD arch) and
/// compiles one trivial kernel, and once all are ready (untimed) they take the set's kernels in
/// order from a counter in shared memory until none is left. Timed from the start signal to the
/// last child's exit, so the row shows what many cores give this workload at all: compiles that
/// slow each other down (shared caches, memory bandwidth, SMT siblings, clock limits) lower it,
/// and nothing of hipacm's does. Must be called while the process has one thread.
VariantRun run_machine_ceiling(const std::vector<SetKernel>& set, const std::string& arch,
                               unsigned processes);

}  // namespace hipacm::bench::nvidia
