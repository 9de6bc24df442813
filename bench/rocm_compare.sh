#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rocm_compare.sh - the same hipacm-compile-bench run on each ROCm, summed up in one table.
#
# Usage: bench/rocm_compare.sh [LABEL[=ROOT]]...
#   LABEL alone runs the bench on this machine; LABEL=ROOT runs it inside the file-system root
#   ROOT, through the command in $ENTER_ROOT (called as `$ENTER_ROOT ROOT COMMAND...`; it must
#   make this checkout visible at the same path inside ROOT). Example:
#     ENTER_ROOT=./enter-root.sh bench/rocm_compare.sh 5.2.3 6.4=/srv/rocm-6.4 7.2=/srv/rocm-7.2
# Environment: BUILD_DIR (default build/release), COUNT (default 32), ROUNDS (default 3),
# REPEATS (default 2: the whole bench runs that many times per ROCm, in alternating order),
# ARCH (default gfx90a), BENCH_ENV (extra NAME=VALUE words for the bench's environment),
# BENCH_PREFIX (a command put before every run, e.g. `flock FILE` to keep other jobs off the
# machine while each run is timed).
#
# Every run compiles with hipacm's cache off and comgr's own cache off (AMD_COMGR_CACHE=0), so no
# round times a cache hit. Per ROCm the table gives the warm per-compile cost of the serial
# in-process hipRTC loop, variant (a), and the ratios (a)/(c) (hipacm in-process, its threads
# behind hipRTC's lock), (a)/(d) (hipacm worker processes) and (a)/(e) (forked copies of (a), the
# machine's ceiling), each taken within one run; a cell lists the runs' values, lowest to highest.
set -euo pipefail
cd "$(dirname "$0")/.."
# Workers are spawned by each process, as in every figure recorded before the compile service
# became the default; HIPACM_ISOLATION=service=auto measures the default instead. The service part
# joins the isolation word already there (process -> process,service=off); a service= part or the
# deprecated HIPACM_COMPILE_SERVICE the caller set is left as it is.
if [[ -z ${HIPACM_COMPILE_SERVICE:-} && ${HIPACM_ISOLATION:-} != *service=* ]]; then
  export HIPACM_ISOLATION=${HIPACM_ISOLATION:+$HIPACM_ISOLATION,}service=off
fi
build=$(realpath "${BUILD_DIR:-build/release}")
bench="$build/hipacm-compile-bench"
count=${COUNT:-32}
rounds=${ROUNDS:-3}
repeats=${REPEATS:-2}
arch=${ARCH:-gfx90a}
[[ -x $bench ]] || { echo "no $bench: build the hipacm-compile-bench target first" >&2; exit 2; }
(($# > 0)) || set -- host

out=$(mktemp -d "$build/rocm-compare.XXXXXX")
trap 'rm -rf "$out"' EXIT
run_one() {  # LABEL[=ROOT] REPEAT
  local label=${1%%=*} root="" prefix=() enter=()
  [[ $1 == *=* ]] && root=${1#*=}
  # Both are command prefixes, split into words on purpose.
  read -r -a prefix <<<"${BENCH_PREFIX:-}"
  if [[ -n $root ]]; then
    [[ -n ${ENTER_ROOT:-} ]] || { echo "$label: ENTER_ROOT is not set" >&2; exit 2; }
    read -r -a enter <<<"$ENTER_ROOT"
    prefix+=("${enter[@]}" "$root")
  fi
  local json="$out/$label.$2.json"
  echo "== $label, run $2" >&2
  # shellcheck disable=SC2086  # BENCH_ENV is a list of words on purpose
  "${prefix[@]}" env HIPACM_CACHE=off AMD_COMGR_CACHE=0 HIPACM_ARCH="$arch" ${BENCH_ENV:-} \
    "$bench" --count "$count" --rounds "$rounds" --arch "$arch" --no-hipcc --json "$json" >&2
}
for ((repeat = 1; repeat <= repeats; ++repeat)); do
  targets=("$@")
  if ((repeat % 2 == 0)); then  # alternate the order, so drift on the machine hits all alike
    for ((i = 0, j = ${#targets[@]} - 1; i < j; ++i, --j)); do
      t=${targets[i]} targets[i]=${targets[j]} targets[j]=$t
    done
  fi
  for target in "${targets[@]}"; do run_one "$target" "$repeat"; done
done

labels=()
for target in "$@"; do labels+=("${target%%=*}"); done
/usr/bin/python3 - "$out" "$count" "${labels[@]}" <<'PY'
import glob, json, sys
out, count, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def cell(values, fmt):
    values = sorted(values)
    text = fmt.format(values[0])
    return text if len(values) == 1 else text + " to " + fmt.format(values[-1])

every = {label: [json.load(open(p)) for p in sorted(glob.glob(f"{out}/{label}.*.json"))]
         for label in labels}
ways = every[labels[0]][0]["parallelism"]
print(f"\n{count} distinct kernels per round; per cell, the spread over the runs (lowest to highest)\n")
print(f"| ROCm | runs | (a) serial hipRTC, per compile (ms) | (a)/(c) in-process, {ways} threads | "
      f"(a)/(d) {ways} worker processes | (a)/(e) {ways} forked copies of (a) |")
print("|---|---:|---:|---:|---:|---:|")
for label in labels:
    runs = every[label]
    per = {v["id"]: [] for v in runs[0]["variants"]}
    for r in runs:
        variants = {v["id"]: v["median_s"] for v in r["variants"]}
        per["a"].append(1000 * variants["a"] / r["kernels"])
        for k in ("c", "d", "e"):
            per[k].append(variants["a"] / variants[k])
    print(f"| {label} | {len(runs)} | {cell(per['a'], '{:.0f}')} | {cell(per['c'], '{:.2f}x')} | "
          f"{cell(per['d'], '{:.2f}x')} | {cell(per['e'], '{:.2f}x')} |")
PY
