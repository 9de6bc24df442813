#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cli_warmup_bench.sh - times `hipacm warmup` on N distinct kernels: cold (empty cache), then warm.
#
# Usage: bench/cli_warmup_bench.sh [BUILD_DIR]      (default build/release)
# Environment: COUNT (default 64), ARCH (default gfx90a), JOBS (default 0 = one per core),
# WARM_RUNS (default 5: the warm command is run that many times and the median is compared).
#
# The kernels are the examples, copied COUNT/16 times; each copy gets a comment naming its
# variant and a -DHIPACM_BENCH_VARIANT=<n> option directive (the scheme of
# bench/common/example_kernels.cpp), so no two are the same compile and every one has its own
# cache key. The cache lives in a fresh temporary directory: the first run is cold, the later
# ones find every kernel in it. The ratio compares whole processes (start-up included), which is
# what a job script waits for.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
hipacm="$build/hipacm"
count=${COUNT:-64}
arch=${ARCH:-gfx90a}
jobs=${JOBS:-0}
warm_runs=${WARM_RUNS:-5}
[[ -x $hipacm ]] || { echo "no $hipacm: build the hipacm-cli target first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
examples=(examples/kernels/*.hip)
made=0
for ((variant = 0; made < count; ++variant)); do
  dir="$work/kernels/v$variant"
  mkdir -p "$dir"
  cp -r examples/kernels/include "$dir/"
  for source in "${examples[@]}"; do
    ((made < count)) || break
    # The leading // block carries the directives, so the new lines go on top of it.
    { echo "// bench variant $variant"
      echo "// hipacm: option=-DHIPACM_BENCH_VARIANT=$variant"
      cat "$source"; } > "$dir/$(basename "$source")"
    made=$((made + 1))
  done
done

export HIPACM_CACHE_DIR="$work/cache"
runs=(cold)
for ((i = 1; i <= warm_runs; ++i)); do runs+=("warm$i"); done
for run in "${runs[@]}"; do
  start=$(date +%s.%N)
  "$hipacm" warmup "$work/kernels" --arch "$arch" --jobs "$jobs" --quiet \
    --json "$work/$run.json" >/dev/null
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
