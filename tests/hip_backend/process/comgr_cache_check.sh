#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# comgr_cache_check.sh - a --no-cache warm-up through hipacm's workers leaves no comgr cache behind.
#
# Usage: tests/hip_backend/process/comgr_cache_check.sh [HIPACM] [KERNELS]
#   HIPACM: the hipacm tool (default build/release/hipacm); KERNELS: what to warm (default
#   examples/kernels). Run it where the ROCm under test is the one hipacm finds (a ROCm root).
# Exit status: 0 passed; 1 failed; 77 skipped, because the comgr found here keeps no cache of its
# own even when asked to (comgr before 7.0, as in ROCm 5.x), so there is nothing to check.
#
# comgr 7.x caches compile steps in ~/.cache/comgr unless AMD_COMGR_CACHE=0. hipacm's workers keep
# it on (comgr 7.2 compiles differently with it off) but point it at a directory that cannot exist,
# unless the user set AMD_COMGR_CACHE or AMD_COMGR_CACHE_DIR. The check runs with a scratch HOME
# and none of comgr's variables set:
#  1. control: one kernel with AMD_COMGR_CACHE_DIR set must leave entries in that directory (the
#     user's choice passes through to the workers, and proves this comgr can cache at all);
#  2. the whole warm-up, for two archs, with nothing set must leave no comgr directory and no
#     llvmcache-* file anywhere under the scratch HOME, XDG_CACHE_HOME or TMPDIR.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
hipacm=$(realpath "${1:-build/release/hipacm}")
kernels=$(realpath "${2:-examples/kernels}")
[[ -x $hipacm ]] || { echo "comgr_cache_check: no $hipacm (build the hipacm-cli target)" >&2; exit 1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/hipacm-comgr-check-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/home" "$scratch/tmp"
# The workers must be the ones compiling: the policy is theirs (an in-process compile reads the
# host's environment as it is).
run_warmup() {
  env -u AMD_COMGR_CACHE -u AMD_COMGR_CACHE_DIR -u AMD_COMGR_CACHE_POLICY -u XDG_CACHE_HOME \
    HOME="$scratch/home" TMPDIR="$scratch/tmp" HIPACM_ISOLATION=process,service=off "$@"
}
cache_files() { find "$scratch/home" "$scratch/tmp" -name 'llvmcache*' 2>/dev/null; }

one=$(find "$kernels" -name '*.hip' | sort | sed -n 1p)
[[ -n $one ]] || { echo "comgr_cache_check: no .hip file in $kernels" >&2; exit 1; }
if ! run_warmup AMD_COMGR_CACHE_DIR="$scratch/user-comgr" \
  "$hipacm" warmup "$one" --no-cache --arch gfx90a -q >"$scratch/control.log" 2>&1; then
  cat "$scratch/control.log" >&2
  echo "comgr_cache_check: FAIL: the control warm-up of $one failed" >&2
  exit 1
fi
if [[ -z $(find "$scratch/user-comgr" -name 'llvmcache-*' 2>/dev/null) ]]; then
  echo "comgr_cache_check: SKIP: comgr wrote no cache entry even with AMD_COMGR_CACHE_DIR set" \
    "(a comgr without a cache of its own)"
  exit 77
fi
echo "comgr_cache_check: control: AMD_COMGR_CACHE_DIR reached the workers" \
  "($(find "$scratch/user-comgr" -name 'llvmcache-*' | wc -l) entries)"

if ! run_warmup "$hipacm" warmup "$kernels" --no-cache --arch gfx90a,gfx1100 -q \
  >"$scratch/warmup.log" 2>&1; then
  cat "$scratch/warmup.log" >&2
  echo "comgr_cache_check: FAIL: the warm-up of $kernels failed" >&2
  exit 1
fi
left=$( { find "$scratch/home" "$scratch/tmp" -name comgr -type d; cache_files; } | sort -u)
if [[ -n $left ]]; then
  echo "comgr_cache_check: FAIL: a --no-cache warm-up left comgr's cache behind:" >&2
  echo "$left" | sed -n 1,20p >&2
  exit 1
fi
echo "comgr_cache_check: PASS: a --no-cache warm-up of $kernels (gfx90a, gfx1100) left no comgr cache"
