#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# comgr_cache_bench.sh - what comgr's own cache does to `hipacm warmup --no-cache`: time and disk.
#
# Usage: bench/comgr_cache_bench.sh [BUILD_DIR]      (default build/release)
# Environment: ARCHS (default gfx90a,gfx942,gfx1030,gfx1100), REPEATS (default 2),
# ISOLATIONS (default "process in-process").
#
# comgr 7.x (ROCm 6.4, 7.2) keeps a cache of compile steps in ~/.cache/comgr unless
# AMD_COMGR_CACHE=0; hipacm's --no-cache does not reach it. For each isolation and each setting
# (AMD_COMGR_CACHE=1, then =0) this runs the same --no-cache warm-up of examples/kernels three
# times in a fresh scratch HOME and prints each run's wall time and what ~/.cache/comgr holds
# afterwards. Each REPEAT starts again from an empty HOME. Run it where the ROCm under test is
# the one hipacm finds; with a comgr that keeps no cache (ROCm 5.x) both settings read the same.
set -euo pipefail
cd "$(dirname "$0")/.."
# Workers are spawned by each process, as in every figure recorded before the compile service
# became the default; HIPACM_ISOLATION=service=auto measures the default instead. Each run's
# isolation word (ISOLATIONS) joins this service part.
service=service=off
[[ ${HIPACM_ISOLATION:-} =~ (^|,)(service=[^,]*) ]] && service=${BASH_REMATCH[2]}
build=${1:-build/release}
hipacm="$(realpath "$build")/hipacm"
archs=${ARCHS:-gfx90a,gfx942,gfx1030,gfx1100}
repeats=${REPEATS:-2}
isolations=${ISOLATIONS:-process in-process}
[[ -x $hipacm ]] || { echo "no $hipacm: build the hipacm-cli target first" >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/hipacm-comgr-bench-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
now() { date +%s.%N; }
echo "| isolation | AMD_COMGR_CACHE | repeat | run 1 (s) | run 2 (s) | run 3 (s) | comgr entries after 1 / 2 / 3 | comgr KiB after 3 |"
echo "|---|---|---|---:|---:|---:|---|---:|"
for isolation in $isolations; do
  for setting in 1 0; do
    for ((repeat = 1; repeat <= repeats; ++repeat)); do
      home="$scratch/home"
      rm -rf "$home" && mkdir -p "$home"
      times=() entries=()
      for _ in 1 2 3; do
        start=$(now)
        env -u AMD_COMGR_CACHE_DIR -u AMD_COMGR_CACHE_POLICY -u XDG_CACHE_HOME HOME="$home" \
          AMD_COMGR_CACHE=$setting HIPACM_ISOLATION="$isolation,$service" \
          "$hipacm" warmup examples/kernels --no-cache --arch "$archs" -q >"$scratch/log" 2>&1 ||
          { cat "$scratch/log" >&2; exit 1; }
        end=$(now)
        times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')")
        entries+=("$(find "$home" -name 'llvmcache-*' 2>/dev/null | wc -l)")
      done
      kib=$( { du -sk "$home/.cache/comgr" 2>/dev/null || true; } | cut -f1)
      echo "| $isolation | $setting | $repeat | ${times[0]} | ${times[1]} | ${times[2]} |" \
        "${entries[0]} / ${entries[1]} / ${entries[2]} | ${kib:-0} |"
    done
  done
done
