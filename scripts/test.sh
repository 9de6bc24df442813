#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the layering, then builds hipacm and runs every test: a release build, the bindings, the
# ROCm 6.4/7.2 matrix, libFuzzer targets for a bounded time, then ASan+UBSan, then TSan.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
export HIPACM_ARCH=${HIPACM_ARCH:-gfx90a}
export CTEST_OUTPUT_ON_FAILURE=1
# The suites count and time real compiles; only the cache suite (which sets
# its own policy and directories) uses the persistent cache.
export HIPACM_CACHE=${HIPACM_CACHE:-off}
# ctest runs suites side by side, each sizing its pools as if alone; a machine-wide budget of
# nproc would make them queue behind each other. The budget's own tests set theirs.
export HIPACM_MACHINE_JOBS=${HIPACM_MACHINE_JOBS:-256}
# The suites count, time, kill and reap the workers they start, so workers are their own
# (HIPACM_ISOLATION's service=off); the compile service's own tests (and the default's) turn it on
# themselves, and tests that choose an isolation keep service=off.
export HIPACM_ISOLATION=${HIPACM_ISOLATION:-service=off}
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
# hipRTC's LLVM installs its own signal stack on pool threads; ASan's would
# then be unmapped twice at thread exit.
export ASAN_OPTIONS="use_sigaltstack=0:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# die_after_fork=0: the fork tests start threads in a child of a threaded
# parent on purpose (that is the host behaviour they check); TSan only
# refuses it because it cannot model it.
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1:die_after_fork=0"

# Every stage's wall time, printed at the end whether the run passes or fails.
stage_names=() stage_starts=()
stage() {
  stage_names+=("$1") stage_starts+=("$SECONDS")
  echo "=== hipacm: $1 === (${SECONDS} s into the run)"
}
print_stage_times() {
  local status=$? i end
  echo "=== hipacm: stage times ($( ((status == 0)) && echo passed || echo "failed, exit $status")) ==="
  for i in "${!stage_names[@]}"; do
    end=${stage_starts[i + 1]:-$SECONDS}
    printf '  %6d s  %s\n' "$((end - stage_starts[i]))" "${stage_names[i]}"
  done
  printf '  %6d s  in all\n' "$SECONDS"
}
trap print_stage_times EXIT

run_config() {
  local name=$1; shift
  stage "$name build"
  cmake -S . -B "build/$name" -G Ninja "$@"
  cmake --build "build/$name" -j "$jobs" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
  stage "$name tests"
  local status=0 rerun
  ctest --test-dir "build/$name" -j "$jobs" --timeout 600 $CTEST_ARGS || status=$?
  ((status == 0)) && return
  # LeakSanitizer's own tracer crashes now and then at exit after a test has passed (no leak, no
  # failed assertion): those tests alone run once more. Any other failure fails the run at once.
  rerun=$(/usr/bin/python3 scripts/lsan-tracer-crashes.py "build/$name")
  if [ -z "$rerun" ]; then
    # Once more at the end of the log, where a CI report's tail shows it.
    echo "=== hipacm: what the failed $name tests printed ==="
    /usr/bin/python3 scripts/ctest_log.py "build/$name" || true
    return "$status"
  fi
  echo "=== hipacm: running once more what failed only by LeakSanitizer's tracer crash ==="
  ctest --test-dir "build/$name" --timeout 600 $CTEST_ARGS -R "$rerun"
}

# First, as it takes a second: each source folder includes only what its DEPS file declares, and
# no cycle runs through the folders (scripts/check-layering.py).
stage "layering check"
/usr/bin/python3 scripts/check-layering.py

CTEST_ARGS="" run_config release -DCMAKE_BUILD_TYPE=Release -DHIPACM_WERROR=ON

stage "Python binding tests"
HIPACM_LIBRARY="$PWD/build/release/libhipacm.so.1" /usr/bin/python3 -m pytest bindings/python/tests -q

stage "Rust binding tests"
(
  cd bindings/rust
  export HIPACM_LIB_DIR="$PWD/../../build/release"
  cargo test --offline
  if cargo clippy --version >/dev/null 2>&1; then
    cargo clippy --offline --all-targets -- -D warnings
    # The dependent crate that cargo test builds and runs (tests/rust_dependent).
    cargo clippy --offline --manifest-path ../../tests/rust_dependent/Cargo.toml \
      --target-dir target/rust_dependent -- -D warnings
  else
    echo "cargo clippy is not installed here: lint step not run"
  fi
)
stage "ROCm matrix (6.4, 7.2)"
# The release build against Debian sid's ROCm 6.4 and experimental's ROCm 7.2, in chroots made
# with debootstrap (docs/ROCM.md). In CI a missing prerequisite fails the run.
rocm_missing=""
if [ "$(id -u)" != 0 ]; then rocm_missing="it needs root"; fi
if ! command -v debootstrap >/dev/null 2>&1; then rocm_missing="${rocm_missing:+$rocm_missing and }debootstrap is not installed"; fi
if [ "${HIPACM_ROCM_MATRIX:-on}" = off ]; then
  echo "HIPACM_ROCM_MATRIX=off: the ROCm matrix is skipped"
elif [ -n "$rocm_missing" ] && [ "${CI:-}" = true ]; then
  echo "error: the ROCm matrix cannot run: $rocm_missing (HIPACM_ROCM_MATRIX=off skips it)" >&2
  exit 1
elif [ -n "$rocm_missing" ]; then
  echo "the ROCm matrix is skipped: $rocm_missing"
else
  rocm_start=$SECONDS rocm_status=0
  bash scripts/rocm-matrix.sh build/release || rocm_status=$?
  echo "ROCm matrix wall time: $((SECONDS - rocm_start)) s"
  if [ "$rocm_status" != 0 ]; then exit "$rocm_status"; fi
  # Off by default: sid's compiler builds everything again, which CI's time budget cannot carry.
  if [ "${HIPACM_ROCM_SID_BUILD:-off}" = on ]; then
    rocm_start=$SECONDS
    bash scripts/rocm-sid-build.sh
    echo "sid build and ctest wall time: $((SECONDS - rocm_start)) s"
  fi
fi
stage "fuzzing every decoder of untrusted bytes (60 s a target)"
bash scripts/fuzz.sh "${HIPACM_FUZZ_SECONDS:-60}"

# Not the mpi label: Open MPI's libraries and the daemons its launcher starts are not built with
# ASan and keep process-lifetime allocations that LeakSanitizer would report in every rank; the
# MPI code's decoders are fuzzed instead (fuzz_cluster_message) and run in the release tests.
CTEST_ARGS="-LE mpi" run_config asan -DCMAKE_BUILD_TYPE=Debug -DHIPACM_SANITIZE=address -DHIPACM_WERROR=ON
# TSan runs the concurrency suites (the core, the worker pool, the cache's processes) and builds
# only what they run.
CTEST_ARGS="-L concurrency" BUILD_TARGET=hipacm_concurrency_tests run_config tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPACM_SANITIZE=thread -DHIPACM_WERROR=ON
echo "=== hipacm: all test configurations passed === (${SECONDS} s into the run)"
