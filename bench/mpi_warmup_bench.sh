#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpi_warmup_bench.sh - `hipacm warmup --mpi` on NP ranks against one rank alone, on the same
# kernels: the wall-time ratio, whether every rank's cache got every kernel, and the bytes the
# ranks exchanged against the bytes of code they compiled.
#
# Usage: bench/mpi_warmup_bench.sh [BUILD_DIR] [NP] [JOBS] [COUNT]   (default build/release 2 1 24)
# Environment (the arguments win): NP (ranks), JOBS (each rank's --jobs), COUNT (kernels),
# ROUNDS (default 3), ARCH (default gfx90a), MPIRUN (default mpirun; may carry options).
#
# Each round, alternating which goes first: `mpirun -np 1` and `mpirun -np NP`, each into fresh
# caches (one per rank, --cache-dir DIR/%r), both started through mpirun so that the launcher's
# own start-up is on both sides. The time is the whole mpirun, measured from outside.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common/bench_setup.sh
build=${1:-build/release}
np=${2:-${NP:-2}}
jobs=${3:-${JOBS:-1}}
count=${4:-${COUNT:-24}}
rounds=${ROUNDS:-3}
arch=${ARCH:-gfx90a}
read -ra mpirun <<< "${MPIRUN:-mpirun}"  # a command and its options, e.g. "mpirun -x VAR"
hipacm="$build/hipacm"
[[ -x $hipacm && -x $build/hipacm-mpi ]] || {
  echo "no $hipacm or $build/hipacm-mpi: build hipacm-cli with HIPACM_WITH_MPI=ON" >&2; exit 2; }
# Root in CI and on the device machines; more ranks than cores on a small machine.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset HIPACM_CACHE HIPACM_CACHE_DIR

make_work_kernels "$count"

warm() {  # RANKS NAME
  local start end
  start=$(date +%s.%N)
  # --bind-to none: Open MPI binds each rank of a job of one or two to a single core, and a
  # rank's workers inherit that binding; the one-rank side would compile on one core.
  "${mpirun[@]}" --oversubscribe --bind-to none -np "$1" "$hipacm" warmup --mpi "$work/kernels" --arch "$arch" \
    --jobs "$jobs" --quiet --cache-dir "$work/$2/%r" --json "$work/$2.json" >/dev/null
  end=$(date +%s.%N)
  echo "$2 $start $end" >> "$work/times"
}
for ((round = 0; round < rounds; ++round)); do
  if ((round % 2 == 0)); then warm 1 "one$round"; warm "$np" "many$round"
  else warm "$np" "many$round"; warm 1 "one$round"; fi
done

/usr/bin/python3 - "$work" "$np" "$jobs" "$count" "$rounds" <<'PY'
import json, statistics, sys
work, np, jobs, count, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
times = {}
for line in open(f"{work}/times"):
    name, start, end = line.split()
    times[name] = float(end) - float(start)
one = [times[f"one{r}"] for r in range(rounds)]
many = [times[f"many{r}"] for r in range(rounds)]
print(f"{count} kernels, {np} ranks of --jobs {jobs} against 1 rank of --jobs {jobs}, {rounds} rounds")
print(f"{'round':<6} {'1 rank s':>9} {f'{np} ranks s':>11} {'ratio':>7} {'compiled':>9} {'complete':>9} {'code bytes':>11} {'exchanged':>10}")
for r in range(rounds):
    report = json.load(open(f"{work}/many{r}.json"))
    mpi = report["mpi"]
    complete = not mpi["incomplete_ranks"] and all(row["missing_after"] == 0 for row in mpi["per_rank"])
    print(f"{r:<6} {one[r]:>9.2f} {many[r]:>11.2f} {one[r] / many[r]:>6.2f}x "
          f"{report['totals']['compiled']:>9} {str(complete):>9} {mpi['code_bytes']:>11} {mpi['bytes_exchanged']:>10}")
m1, mn = statistics.median(one), statistics.median(many)
report = json.load(open(f"{work}/many{rounds - 1}.json"))["mpi"]
print(f"median: 1 rank {m1:.2f} s, {np} ranks {mn:.2f} s = {m1 / mn:.2f}x")
print(f"bytes exchanged / bytes of code compiled: {report['bytes_exchanged']} / {report['code_bytes']}"
      f" = {report['bytes_exchanged'] / max(report['code_bytes'], 1):.2f}"
      f" (every rank gets the code of the other {np - 1})")
for row in report["per_rank"]:
    print(f"  rank {row['rank']}: compiled {row['compiled']}, received {row['received']}, "
          f"{row['seconds']:.2f} s, sent {row['bytes_sent']} B in {row['messages_sent']} messages, "
          f"received {row['bytes_received']} B in {row['messages_received']}")
PY
