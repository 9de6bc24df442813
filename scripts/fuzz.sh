#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (build/fuzz, clang-14) and fuzzes each over a copy of its corpus for a
# bounded time; fails, naming the reproducer, if any target crashes, leaks, times out or runs out of memory.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET]    (default 60)
#
# Environment: HIPACM_FUZZ_TARGETS (a space-separated subset), HIPACM_FUZZ_JOBS (build jobs, 2),
# HIPACM_FUZZ_PARALLEL (targets fuzzed side by side, nproc),
# HIPACM_FUZZ_BUILD_DIR (build/fuzz), HIPACM_FUZZ_CORPUS_OUT (a directory to keep the grown corpora in),
# HIPACM_FUZZ_BUILD_ONLY=1 (build the targets, fuzz nothing: scripts/test.sh builds them ahead).
set -euo pipefail

seconds=${1:-60}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${HIPACM_FUZZ_BUILD_DIR:-$root/build/fuzz}
jobs=${HIPACM_FUZZ_JOBS:-2}
fuzz_parallel=${HIPACM_FUZZ_PARALLEL:-$(nproc)}
targets=${HIPACM_FUZZ_TARGETS:-"worker_request worker_result code_object cache_entry cache_import manifest request_reader record_reader cluster_message service_message library_fact compile_log_paths run_stats nvrtc_program_name kernel_resources remote_value"}

# Inputs larger than the seeds need, small enough that every input runs fast.
max_len() {
  case $1 in
    code_object | worker_result | cache_import | kernel_resources) echo 65536 ;;
    *) echo 16384 ;;
  esac
}

for tool in clang-14 clang++-14; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool is missing (apt-get install clang-14 libfuzzer-14-dev)" >&2; exit 1; }
done

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DHIPACM_FUZZ=ON -DHIPACM_WERROR=ON
fi
cmake --build "$build" -j"$jobs" --target hipacm_fuzz_targets
if [[ ${HIPACM_FUZZ_BUILD_ONLY:-} == 1 ]]; then exit 0; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hipacm-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=$build/fuzz-artifacts
# One target's run: its report goes to $work/$target/report, its exit status to .../rc.
fuzz_one() {
  local target=$1 exe=$build/tests/fuzz/fuzz_$1 corpus=$work/$1/corpus rc=0
  local log=$artifacts/$target/fuzz.log report=$work/$1/report
  mkdir -p "$corpus" "$work/$target/tmp" "$artifacts/$target"
  # A copy: what the run discovers never grows the repository's corpus.
  for dir in "$root/tests/fuzz/corpus/$target" "$root/tests/fuzz/regressions/$target"; do
    [[ -d $dir ]] && cp -p "$dir"/* "$corpus"/ 2>/dev/null || true
  done
  echo "== fuzz_$target: ${seconds}s over $(ls "$corpus" | wc -l) seed inputs" >"$report"
  TMPDIR=$work/$target/tmp HIPACM_LOG=off HIPACM_CACHE=off \
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -max_len="$(max_len "$target")" -artifact_prefix="$artifacts/$target/" -print_final_stats=1 \
    "$corpus" >"$log" 2>&1 || rc=$?
  grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$log" | tail -2 >>"$report" || true
  if [[ $rc -ne 0 ]]; then
    {
      echo "fuzz_$target FAILED (exit $rc); its log is $log"
      grep -E 'ERROR: |SUMMARY: |fuzz invariant broken|Test unit written to' "$log" || tail -20 "$log"
    } >>"$report"
  fi
  if [[ -n ${HIPACM_FUZZ_CORPUS_OUT:-} ]]; then
    mkdir -p "$HIPACM_FUZZ_CORPUS_OUT/$target"
    cp -p "$corpus"/* "$HIPACM_FUZZ_CORPUS_OUT/$target"/ 2>/dev/null || true
  fi
  echo "$rc" >"$work/$target/rc"
}

for target in $targets; do
  [[ -x $build/tests/fuzz/fuzz_$target ]] || { echo "fuzz.sh: no target $build/tests/fuzz/fuzz_$target" >&2; exit 1; }
done
# Each libFuzzer run is single-threaded: as many side by side as there are cores.
running=0
for target in $targets; do
  if ((running >= fuzz_parallel)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true
failed=()
for target in $targets; do
  cat "$work/$target/report"
  if [[ $(cat "$work/$target/rc" 2>/dev/null || echo missing) != 0 ]]; then failed+=("$target"); fi
done

if [[ ${#failed[@]} -ne 0 ]]; then
  echo "fuzzing found problems in: ${failed[*]} (reproducers under $artifacts/<target>/)" >&2
  exit 1
fi
echo "fuzzing: no crash, leak or timeout in: $targets"
