#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the layering, then builds hipacm and runs every test: a release build, the bindings, the
# ROCm 6.4/7.2 matrix, libFuzzer targets for a bounded time, then ASan+UBSan, then TSan.
#
# Environment (besides the suites' own, below):
#   HIPACM_TEST_STAGES   the stages to run, space- or comma-separated, in this order whatever the
#                        order given: release python rust rocm fuzz asan tsan (default: all). python,
#                        rust and rocm use build/release as the release stage left it.
#   HIPACM_FUZZ_SECONDS  seconds of fuzzing per target (default 30; scripts/fuzz.sh alone: 60)
#   HIPACM_BUILD_AHEAD   off: the fuzz, ASan and TSan builds are not made ahead (see below)
#   HIPACM_ROCM_MATRIX, HIPACM_ROCM_SID_BUILD: docs/ROCM.md
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

all_stages="release python rust rocm fuzz asan tsan"
selected_stages=" ${HIPACM_TEST_STAGES:-$all_stages} "
selected_stages=${selected_stages//,/ }
for name in $selected_stages; do
  if [[ " $all_stages " != *" $name "* ]]; then
    echo "error: HIPACM_TEST_STAGES names '$name'; the stages are: $all_stages" >&2
    exit 2
  fi
done
wanted() { [[ $selected_stages == *" $1 "* ]]; }

# Every stage's wall time, printed at the end whether the run passes or fails, with how busy the
# machine's CPUs were meanwhile (from /proc/stat): with the stage's own work, and with the builds
# made ahead at nice 19 (below), whose time the kernel counts apart. A stage whose own share is
# far below 100 % leaves room for work beside it.
stage_names=() stage_starts=() stage_cpu=()
cpu_times() {
  local cpu user nice system idle iowait irq softirq rest
  read -r cpu user nice system idle iowait irq softirq rest </proc/stat
  echo "$((user + system + irq + softirq)) $nice $((user + nice + system + idle + iowait + irq + softirq))"
}
stage() {
  stage_names+=("$1") stage_starts+=("$SECONDS") stage_cpu+=("$(cpu_times)")
  echo "=== hipacm: $1 === (${SECONDS} s into the run)"
}
print_stage_times() {
  local status=$1 i end own0 nice0 all0 own1 nice1 all1 all now
  now=$(cpu_times)
  echo "=== hipacm: stage times ($( ((status == 0)) && echo passed || echo "failed, exit $status")), CPU busy with the stage's own work, and with builds made ahead ==="
  for i in "${!stage_names[@]}"; do
    end=${stage_starts[i + 1]:-$SECONDS}
    read -r own0 nice0 all0 <<<"${stage_cpu[i]}"
    read -r own1 nice1 all1 <<<"${stage_cpu[i + 1]:-$now}"
    all=$((all1 - all0 > 0 ? all1 - all0 : 1))
    printf '  %6d s  %3d %%  %3d %%  %s\n' "$((end - stage_starts[i]))" "$(((own1 - own0) * 100 / all))" \
      "$(((nice1 - nice0) * 100 / all))" "${stage_names[i]}"
  done
  printf '  %6d s  in all\n' "$SECONDS"
}
# The ROCm roots are made in the background (below); a run that ends early, passed or failed,
# ends their maker too: it runs in a session of its own, so that the signal reaches debootstrap and
# apt-get. A half-made root is never used (rocm-roots.sh renames a root into place only once it is
# complete, and its next run removes what was left).
rocm_roots_pid="" rocm_roots_log=""
stop_rocm_roots() {
  if [ -n "$rocm_roots_pid" ] && kill -0 "$rocm_roots_pid" 2>/dev/null; then
    echo "=== hipacm: stopping the ROCm roots' maker (pid $rocm_roots_pid; log $rocm_roots_log) ==="
    kill -TERM -- "-$rocm_roots_pid" 2>/dev/null || kill -TERM "$rocm_roots_pid" 2>/dev/null || true
    wait "$rocm_roots_pid" 2>/dev/null || true
  fi
  rocm_roots_pid=""
  if [ -n "$rocm_roots_log" ]; then rm -f "$rocm_roots_log"; fi
}
# The builds made ahead (below) likewise; ninja removes what an interrupted compile left.
ahead_pid="" ahead_dir=""
stop_builds_ahead() {
  if [ -n "$ahead_pid" ] && kill -0 "$ahead_pid" 2>/dev/null; then
    echo "=== hipacm: stopping the builds made ahead (pid $ahead_pid) ==="
    kill -TERM -- "-$ahead_pid" 2>/dev/null || kill -TERM "$ahead_pid" 2>/dev/null || true
    wait "$ahead_pid" 2>/dev/null || true
  fi
  ahead_pid=""
  if [ -n "$ahead_dir" ]; then rm -rf "$ahead_dir"; fi
}
on_exit() {
  local status=$?
  stop_rocm_roots
  stop_builds_ahead
  print_stage_times "$status"
}
# Bash runs it too when a signal ends the run.
trap on_exit EXIT

# configure_and_build NAME TARGET CMAKE_ARG...: build/NAME configured with the arguments, then TARGET
# (or everything, when empty) built in it.
configure_and_build() {
  local name=$1 target=$2
  shift 2
  cmake -S . -B "build/$name" -G Ninja "$@" && cmake --build "build/$name" -j "$jobs" ${target:+--target "$target"}
}

# run_config NAME CMAKE_ARG...: the stage NAME (when HIPACM_TEST_STAGES selects it): its build, then
# its ctest with CTEST_ARGS.
run_config() {
  local name=$1; shift
  if ! wanted "$name"; then return 0; fi
  stage "$name build"
  wait_for_build_ahead "$name"
  configure_and_build "$name" "${BUILD_TARGET:-}" "$@"
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

# The ROCm matrix (below) runs the release build against ROCm 6.4 and 7.2 in Debian sid roots made
# with debootstrap (docs/ROCM.md). In CI a missing prerequisite fails the run.
rocm_missing=""
if [ "$(id -u)" != 0 ]; then rocm_missing="it needs root"; fi
if ! command -v debootstrap >/dev/null 2>&1; then rocm_missing="${rocm_missing:+$rocm_missing and }debootstrap is not installed"; fi
rocm_matrix=run
if ! wanted rocm; then
  rocm_matrix=unselected
elif [ "${HIPACM_ROCM_MATRIX:-on}" = off ]; then
  rocm_matrix=off
elif [ -n "$rocm_missing" ] && [ "${CI:-}" = true ]; then
  echo "error: the ROCm matrix cannot run: $rocm_missing (HIPACM_ROCM_MATRIX=off skips it)" >&2
  exit 1
elif [ -n "$rocm_missing" ]; then
  rocm_matrix=missing
fi
# Making the roots from nothing is mostly downloads and dpkg, which the release build's compilers
# leave room for: they are made (or found cached) from now on, and the matrix waits for them.
if [ "$rocm_matrix" = run ]; then
  rocm_roots_log=$(mktemp "${TMPDIR:-/tmp}/hipacm-rocm-roots.XXXXXX")
  # A background job of this script is no process group leader, so setsid makes the session
  # in that very process: its pid is the session's and its process group's.
  setsid bash scripts/rocm-roots.sh rocm-6.4 rocm-7.2 </dev/null >"$rocm_roots_log" 2>&1 &
  rocm_roots_pid=$!
  echo "ROCm roots: made or checked in the background (pid $rocm_roots_pid, log $rocm_roots_log)"
fi

# The sanitizer builds carry line tables only (-g1), not full debug information: their reports
# name every frame's function, file and line all the same, and the compiles and links take less
# (a large test file's compile took 10 % less CPU under ASan, 18 % less under TSan, its object a
# quarter of the size under TSan). Rebuild with -g to debug a report in gdb.
asan_args=(-DCMAKE_BUILD_TYPE=Debug -DHIPACM_SANITIZE=address -DHIPACM_WERROR=ON
  -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1)
# TSan runs the concurrency suites (the core, the worker pool, the cache's processes) and the
# remote cache tier's C++ suites (its pooled connections, background writer, claims and breaker;
# label remote, less the tool's pytest, which needs the whole tool), and builds only what they run.
tsan_target=hipacm_concurrency_tests
tsan_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPACM_SANITIZE=thread -DHIPACM_WERROR=ON
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")

# The fuzz, ASan and TSan builds are made ahead, one after another, beside the stages before
# theirs, at the lowest CPU and I/O priority (SCHED_IDLE, nice 19, idle I/O class): they take only
# the CPU time those stages leave (ctest's stragglers, a build's last links, the ROCm roots'
# downloads, the matrix's serial steps) and give it back the moment a stage wants it. Each stage
# waits for its own build ahead, then builds as before, which finds the work done (or, where the
# build ahead failed, fails the same way in the open).
start_builds_ahead() {
  local steps=() step
  if [ "${HIPACM_BUILD_AHEAD:-on}" = off ]; then return 0; fi
  for step in fuzz asan tsan; do
    if wanted "$step"; then steps+=("$step"); fi
  done
  if [ ${#steps[@]} = 0 ]; then return 0; fi
  ahead_dir=$(mktemp -d "${TMPDIR:-/tmp}/hipacm-builds-ahead.XXXXXX")
  # Monitor mode for this one job: it gets a process group of its own, which stop_builds_ahead
  # signals whole.
  set -m
  (
    trap - EXIT
    renice -n 19 -p "$BASHPID" >/dev/null 2>&1 || true
    chrt --idle -p 0 "$BASHPID" >/dev/null 2>&1 || true
    ionice -c 3 -p "$BASHPID" >/dev/null 2>&1 || true
    for step in "${steps[@]}"; do
      rc=0
      case $step in
        fuzz) HIPACM_FUZZ_BUILD_ONLY=1 bash scripts/fuzz.sh ;;
        asan) configure_and_build asan "" "${asan_args[@]}" ;;
        tsan) configure_and_build tsan "$tsan_target" "${tsan_args[@]}" ;;
      esac </dev/null >"$ahead_dir/$step.log" 2>&1 || rc=$?
      echo "$rc" >"$ahead_dir/$step.rc"
    done
  ) &
  ahead_pid=$!
  set +m
  echo "builds made ahead at the lowest priority: ${steps[*]} (pid $ahead_pid)"
}

# wait_for_build_ahead NAME: returns once the build ahead of NAME has ended (or none was made).
wait_for_build_ahead() {
  local name=$1 start=$SECONDS
  if [ -z "$ahead_pid" ] || [ ! -d "$ahead_dir" ]; then return 0; fi
  case " fuzz asan tsan " in *" $name "*) ;; *) return 0 ;; esac
  while [ ! -e "$ahead_dir/$name.rc" ] && kill -0 "$ahead_pid" 2>/dev/null; do sleep 2; done
  echo "the $name build made ahead: exit $(cat "$ahead_dir/$name.rc" 2>/dev/null || echo "none (ended early)"), $((SECONDS - start)) s waited for"
}

start_builds_ahead

CTEST_ARGS="" run_config release -DCMAKE_BUILD_TYPE=Release -DHIPACM_WERROR=ON

if wanted python; then
  stage "Python binding tests"
  HIPACM_LIBRARY="$PWD/build/release/libhipacm.so.1" /usr/bin/python3 -m pytest bindings/python/tests -q
fi

if wanted rust; then
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
fi

if wanted rocm; then
  stage "ROCm matrix (6.4, 7.2)"
  if [ "$rocm_matrix" = off ]; then
    echo "HIPACM_ROCM_MATRIX=off: the ROCm matrix is skipped"
  elif [ "$rocm_matrix" = missing ]; then
    echo "the ROCm matrix is skipped: $rocm_missing"
  else
    rocm_start=$SECONDS rocm_status=0
    wait "$rocm_roots_pid" || rocm_status=$?
    rocm_roots_pid=""
    echo "ROCm roots ready after $((SECONDS - rocm_start)) s of waiting; what their maker printed:"
    cat "$rocm_roots_log"
    rm -f "$rocm_roots_log"
    rocm_roots_log=""
    if [ "$rocm_status" != 0 ]; then
      echo "error: making the ROCm roots failed (exit $rocm_status); its output is above" >&2
      exit "$rocm_status"
    fi
    # It finds the roots just made current, and holds them while it runs.
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
fi

# 30 s a target: every committed input also runs in each ctest below (the fuzz label's corpus
# replays), so this stage is for what new inputs find; scripts/fuzz.sh alone fuzzes 60 s.
fuzz_seconds=${HIPACM_FUZZ_SECONDS:-30}
if wanted fuzz; then
  stage "fuzzing every decoder of untrusted bytes ($fuzz_seconds s a target)"
  wait_for_build_ahead fuzz
  bash scripts/fuzz.sh "$fuzz_seconds"
fi

# Not the mpi label: Open MPI's libraries and the daemons its launcher starts are not built with
# ASan and keep process-lifetime allocations that LeakSanitizer would report in every rank; the
# MPI code's decoders are fuzzed instead (fuzz_cluster_message) and run in the release tests.
CTEST_ARGS="-LE mpi" run_config asan "${asan_args[@]}"
CTEST_ARGS="-L concurrency|remote -LE cli" BUILD_TARGET=$tsan_target run_config tsan "${tsan_args[@]}"
echo "=== hipacm: all test configurations passed ($(echo $selected_stages)) === (${SECONDS} s into the run)"
