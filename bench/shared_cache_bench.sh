#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# shared_cache_bench.sh - several `hipacm warmup` runs of the same kernels into one cache at once,
# against one run alone: how many compiles they make between them, and how much longer they take.
#
# Usage: bench/shared_cache_bench.sh [BUILD_DIR]      (default build/release)
# Environment: COUNT (kernels, default 12), RUNS (concurrent runs, default 4), ROUNDS (default 3),
# ARCH (default gfx90a), JOBS (each run's --jobs, default 0 = one per core), MACHINE_JOBS (the
# machine-wide worker budget, HIPACM_MACHINE_JOBS, default: online CPUs).
#
# Each round, alternating which goes first: one run alone into a fresh cache, and RUNS runs
# started together into another fresh cache. Every run is a whole `hipacm` process, timed from
# outside; the concurrent side's time is until the last of them exits. Claims on cache keys
# (docs/CACHE.md, "One compile per kernel per machine") should make the concurrent runs compile
# COUNT kernels in total, not RUNS x COUNT. A sampler reads the machine-wide budget's slots every
# 5 ms (bench/common/slot_sampler.py), in a private HIPACM_RUNTIME_DIR, and reports the most
# workers that compiled at once on each side.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common/bench_setup.sh
source bench/common/warmup_cli.sh
use_cli_build "${1:-build/release}"
count=${COUNT:-12}
runs=${RUNS:-4}
rounds=${ROUNDS:-3}
arch=${ARCH:-gfx90a}
jobs=${JOBS:-0}
machine_jobs=${MACHINE_JOBS:-$(nproc)}

make_work_kernels "$count"
export HIPACM_RUNTIME_DIR="$work/run" HIPACM_MACHINE_JOBS=$machine_jobs

sampler_pid=""
sample_slots() {  # OUT_FILE
  /usr/bin/python3 bench/common/slot_sampler.py "$HIPACM_RUNTIME_DIR/worker-slots" \
    "$machine_jobs" "$1" &
  sampler_pid=$!
}
stop_sampler() { kill -TERM "$sampler_pid"; wait "$sampler_pid" || true; }

alone() {  # ROUND
  local start end
  sample_slots "$work/alone$1.slots"
  start=$(date +%s.%N)
  warm_into "$work/alone$1" "$work/alone$1.json"
  end=$(date +%s.%N)
  stop_sampler
  echo "alone $1 $start $end" >> "$work/times"
}
together() {  # ROUND
  local start end i pids=()
  sample_slots "$work/together$1.slots"
  start=$(date +%s.%N)
  for ((i = 0; i < runs; ++i)); do
    warm_into "$work/together$1" "$work/together$1-$i.json" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  end=$(date +%s.%N)
  stop_sampler
  echo "together $1 $start $end" >> "$work/times"
}
for ((round = 0; round < rounds; ++round)); do
  if ((round % 2 == 0)); then alone "$round"; together "$round"
  else together "$round"; alone "$round"; fi
done

/usr/bin/python3 - "$work" "$runs" "$count" "$machine_jobs" <<'PY'
import json, statistics, sys
work, runs, count, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def peak(name):
    return int(open(f"{work}/{name}.slots").read().split()[1])

seconds = {}
for line in open(f"{work}/times"):
    side, rnd, start, end = line.split()
    seconds[(side, rnd)] = float(end) - float(start)
ratios = []
for rnd in sorted({r for _, r in seconds}, key=int):
    alone = json.load(open(f"{work}/alone{rnd}.json"))["totals"]
    together = [json.load(open(f"{work}/together{rnd}-{i}.json"))["totals"] for i in range(runs)]
    if alone["failed"] or any(t["failed"] for t in together):
        sys.exit(f"round {rnd}: a kernel failed to compile")
    compiled = sum(t["compiled"] for t in together)
    hits = sum(t["cache_hits"] for t in together)
    ratio = seconds[("together", rnd)] / seconds[("alone", rnd)]
    ratios.append(ratio)
    print(f"round {rnd}: alone {seconds[('alone', rnd)]:.3f} s, {alone['compiled']} compiled; "
          f"{runs} together {seconds[('together', rnd)]:.3f} s, {compiled} compiled and {hits} "
          f"cache hits between them; ratio {ratio:.2f}x; most workers compiling at once: "
          f"alone {peak('alone' + rnd)}, together {peak('together' + rnd)} (budget {budget})")
    if compiled != count:
        print(f"  note: {compiled} compiles for {count} kernels")
print(f"median ratio, {runs} runs together / one alone: {statistics.median(ratios):.2f}x "
      f"({count} kernels, {len(ratios)} rounds)")
PY
