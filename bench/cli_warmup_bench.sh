#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_warmup_bench.sh - times `hipacm warmup` on N distinct kernels: cold (empty cache), then warm.
#
# Usage: bench/cli_warmup_bench.sh [BUILD_DIR]      (default build/release)
# Environment: COUNT (default 64), ARCH (default gfx90a), JOBS (default 0 = one per core),
# WARM_RUNS (default 5: the warm command is run that many times and the median is compared).
#
# The kernels are COUNT distinct copies of the examples (bench/common/kernel_variants.sh), each
# with its own cache key. The cache lives in a fresh temporary directory: the first run is cold, the later
# ones find every kernel in it. The ratio compares whole processes (start-up included), which is
# what a job script waits for.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common/bench_setup.sh
source bench/common/warmup_cli.sh
use_cli_build "${1:-build/release}"
count=${COUNT:-64}
arch=${ARCH:-gfx90a}
jobs=${JOBS:-0}
warm_runs=${WARM_RUNS:-5}

make_work_kernels "$count"

runs=(cold)
for ((i = 1; i <= warm_runs; ++i)); do runs+=("warm$i"); done
for run in "${runs[@]}"; do
  start=$(date +%s.%N)
  warm_into "$work/cache" "$work/$run.json"
  end=$(date +%s.%N)
  echo "$run $start $end" >> "$work/times"
done
/usr/bin/python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
rows = []
for line in open(f"{work}/times"):
    run, start, end = line.split()
    t = json.load(open(f"{work}/{run}.json"))["totals"]
    process = float(end) - float(start)
    rows.append((run, t, process))
    print(f"{run:>6}: {t['kernels']} kernels, {t['cache_hits']} cache hits, "
          f"{t['compiled']} compiled, {t['failed']} failed; warmup wall {t['wall_seconds']:.3f} s, "
          f"process {process:.3f} s, compile sum {t['compile_seconds']:.2f} s")
cold = rows[0]
warm = rows[1:]
if warm:
    if any(t["cache_hits"] != t["kernels"] for _, t, _ in warm):
        sys.exit("a warm run missed the cache")
    median_process = statistics.median(p for _, _, p in warm)
    median_wall = statistics.median(t["wall_seconds"] for _, t, _ in warm)
    print(f" ratio: whole process cold/median warm = {cold[2] / median_process:.0f}x "
          f"({cold[2]:.3f} s / {median_process:.3f} s); warmup wall cold/median warm = "
          f"{cold[1]['wall_seconds'] / max(median_wall, 1e-6):.0f}x")
PY
