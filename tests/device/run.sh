#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run.sh - the whole device suite in one command on a GPU machine: environment report,
# example-kernel GPU checks, C++ compile benchmarks for NVIDIA (NVRTC, sm_90) and AMD (hipRTC,
# gfx90a, on the CPU cores), Python compile benchmarks, and the Triton slot-bug demo.
# Needs .device-bundle/ (made by scripts/device-bundle.sh on the build machine). Every stage runs
# under timeout(1), logs into $OUT, and a failing stage does not stop the next one.
#
# Environment: OUT (./device-out); HIPACM_DEVICE_BUDGET_S, the whole run (540 s);
# HIPACM_DEVICE_STAGES, the stages to run, comma-separated, of checks, nvidia, amd, python, launch,
# node, mpi, run and demo (default: all; the environment report always runs); HIPACM_DEVICE_NVIDIA_ROUNDS (3),
# HIPACM_DEVICE_PYTHON_ROUNDS (3), HIPACM_DEVICE_AMD_ROUNDS (2) and
# HIPACM_DEVICE_AMD_ARGS and HIPACM_DEVICE_NVIDIA_ARGS (more hipacm-nvidia-bench options for the
# gfx90a and sm_90 benches, e.g. "--skip a-warm,d16");
# HIPACM_DEVICE_NODE_RUNS (8) and HIPACM_DEVICE_NODE_ROUNDS (2) for the node stage;
# HIPACM_DEVICE_RUN_ROUNDS (3) for the run stage (unchanged programs under `hipacm run`).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
OUT=${OUT:-$ROOT/device-out}
BUNDLE=$ROOT/.device-bundle
TOTAL_BUDGET_S=${HIPACM_DEVICE_BUDGET_S:-540}  # the whole run; each stage gets at most what is left
STAGES=,${HIPACM_DEVICE_STAGES:-checks,nvidia,amd,python,launch,node,mpi,run,demo},
RUN_ROUNDS=${HIPACM_DEVICE_RUN_ROUNDS:-3}
AMD_ROUNDS=${HIPACM_DEVICE_AMD_ROUNDS:-2}
NVIDIA_ROUNDS=${HIPACM_DEVICE_NVIDIA_ROUNDS:-3}
PYTHON_ROUNDS=${HIPACM_DEVICE_PYTHON_ROUNDS:-3}
AMD_ARGS=${HIPACM_DEVICE_AMD_ARGS:-}
NVIDIA_ARGS=${HIPACM_DEVICE_NVIDIA_ARGS:-}
mkdir -p "$OUT"
SUMMARY=$OUT/summary.txt
WORK=$(mktemp -d /tmp/hipacm-device.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
STARTED=$(date +%s)
: > "$SUMMARY"

note() { echo "$*" | tee -a "$SUMMARY"; }
wanted() { [[ $STAGES == *,$1,* ]]; }
for name in ${STAGES//,/ }; do
  case $name in
    checks|nvidia|amd|python|launch|node|mpi|run|demo) ;;
    *) echo "run.sh: unknown stage '$name' in HIPACM_DEVICE_STAGES (checks, nvidia, amd, python, launch, node, mpi, run, demo)" >&2
       exit 2 ;;
  esac
done
remaining() { echo $(( TOTAL_BUDGET_S - ($(date +%s) - STARTED) )); }

# stage NAME LIMIT_S LOGFILE COMMAND...: runs COMMAND under timeout with min(LIMIT, time left),
# appends its output to $OUT/LOGFILE and one status line to the summary.
stage() {
  local name=$1 limit=$2 logname=$3
  local log=$OUT/$logname
  shift 3
  local left
  left=$(remaining)
  (( left < limit )) && limit=$left
  if (( limit < 10 )); then
    note "SKIPPED  $name: the ${TOTAL_BUDGET_S} s budget is used up"
    return 0
  fi
  echo "===== $name (limit ${limit} s): $*" | tee -a "$log"
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  local verdict=OK
  case $rc in
    0) verdict=OK ;;
    77) verdict="SKIP(77)" ;;
    124|137) verdict="TIMEOUT" ;;
    *) verdict="FAIL(rc=$rc)" ;;
  esac
  note "$(printf '%-9s %-34s %4ds  log: %s' "$verdict" "$name" $((SECONDS - t0)) "$logname")"
  echo | tee -a "$log" >/dev/null
  return 0
}

note "hipacm device suite, $(date -u +%FT%TZ), host $(hostname), stages ${STAGES:1:-1}"
if [[ ! -x $BUNDLE/hipacm-device-check || ! -f $BUNDLE/libhipacm.so.1 ]]; then
  note "FAIL     .device-bundle is missing or incomplete: run 'bash scripts/device-bundle.sh' on the"
  note "         build machine and carry .device-bundle to this one."
  exit 1
fi

# -- libraries (the bundle itself first: its binaries carry the build tree's RUNPATH): the bundle's copies only where this system lacks the same soname, so a newer
#    system library (OpenSSL, say) is preferred and nothing shadows what Python and torch load.
LIBDIR=$WORK/lib
mkdir -p "$LIBDIR"
for lib in "$BUNDLE"/deps/*; do
  [[ -e $lib ]] || continue
  soname=$(basename "$lib")
  if ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$soname "; then
    echo "system provides $soname"
  else
    ln -s "$lib" "$LIBDIR/$soname"
    echo "bundled $soname"
  fi
done > "$WORK/libs.txt"

# -- NVRTC: $HIPACM_NVRTC_LIBRARY, the toolkit, the pip wheel, then anywhere on the disk.
find_nvrtc() {
  local c
  for c in "${HIPACM_NVRTC_LIBRARY:-}" /usr/local/cuda/lib64/libnvrtc.so.13 \
           /usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13 /usr/local/cuda/lib/libnvrtc.so.13; do
    [[ -n $c && -e $c ]] && { echo "$c"; return; }
  done
  c=$(python3 - 2>/dev/null <<'PY'
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for root in roots:
    for hit in sorted(glob.glob(os.path.join(root, "nvidia", "**", "libnvrtc.so.13*"), recursive=True)):
        if "builtins" not in hit:
            print(hit); raise SystemExit
PY
)
  [[ -n $c ]] && { echo "$c"; return; }
  timeout 60 find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libnvrtc.so.13*' -print 2>/dev/null |
    grep -v builtins | head -1
}
NVRTC=$(find_nvrtc)
if [[ -n $NVRTC ]]; then
  export HIPACM_NVRTC_LIBRARY=$NVRTC
  NVRTC_DIR=$(dirname "$NVRTC")
else
  NVRTC_DIR=
fi
export HIPACM_WORKER=$BUNDLE/hipacm-worker
export HIPACM_LIBRARY=$BUNDLE/libhipacm.so.1
HIPACM_LD=$BUNDLE:$LIBDIR${NVRTC_DIR:+:$NVRTC_DIR}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Our binaries get the bundle's libraries; Python runs with the system's own loader path.
with_bundle() { env LD_LIBRARY_PATH="$HIPACM_LD" "$@"; }
export BUNDLE WORK NVRTC HIPACM_LD
export -f with_bundle

environment_report() {
  echo "--- bundle"; cat "$BUNDLE/BUILD-INFO.txt"; cat "$WORK/libs.txt"
  echo "--- NVRTC: ${NVRTC:-NOT FOUND}"
  echo "--- GPU"; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "--- system"; grep PRETTY_NAME /etc/os-release; ldd --version | head -1; nproc
  # SMT siblings and shared caches decide how much 16 compiles at once slow each other down.
  lscpu 2>/dev/null | grep -E "^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|L2|L3|Hypervisor)" ||
    grep -m1 "model name" /proc/cpuinfo
  command -v nvcc >/dev/null && nvcc --version | tail -2
  echo "--- python"; python3 - <<'PY'
import importlib, sys
print("python", sys.version.split()[0])
for name in ("torch", "triton", "cupy", "cuda.bindings", "numpy"):
    try:
        m = importlib.import_module(name)
        print(f"{name} {getattr(m, '__version__', '?')}")
    except Exception as e:
        print(f"{name} unavailable: {type(e).__name__}: {e}")
PY
  echo "--- libhipacm.so.1 resolves"
  with_bundle ldd "$BUNDLE/libhipacm.so.1"
  if with_bundle ldd "$BUNDLE/libhipacm.so.1" | grep -q "not found"; then return 1; fi
  [[ -n $NVRTC ]]
}
export -f environment_report

# -- AMD: the bundle's ROCm hipRTC runtime (xz-compressed, scripts/device-bundle.sh) unpacked into
#    $WORK/rocm, first on the loader's path of our binaries and named by HIPACM_HIPRTC_LIBRARY.
#    hipRTC needs no GPU for an explicit arch: gfx90a compiles run on this machine's CPU cores.
amd_bench() {
  local t0=$SECONDS hiprtc rc
  hiprtc=$(bash tests/device/unpack-rocm.sh "$BUNDLE/rocm" "$WORK/rocm")
  rc=$?
  (( rc == 0 )) || return "$rc"
  echo "unpacked the ROCm runtime ($(du -sm "$WORK/rocm" | cut -f1) MiB) in $((SECONDS - t0)) s: $hiprtc"
  local ld=$BUNDLE:$WORK/rocm:$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  if env LD_LIBRARY_PATH="$ld" ldd "$hiprtc" "$WORK/rocm/libamd_comgr.so.2" | grep "not found"; then
    echo "a library of the ROCm runtime is missing"
    return 1
  fi
  # shellcheck disable=SC2086  # AMD_ARGS: options, split on purpose
  env LD_LIBRARY_PATH="$ld" HIPACM_HIPRTC_LIBRARY="$hiprtc" "$BUNDLE/hipacm-nvidia-bench" \
    --set "$SET" --arch gfx90a --rounds "$AMD_ROUNDS" --threads 16 --scaling 1,2,4,8,16 \
    --timeout 60 --budget 170 --json "$OUT/bench-amd.json" $AMD_ARGS
}
# Node scale: NODE_RUNS `hipacm warmup` processes of the same 64 kernels into one cache at once,
# against one alone (bench/shared_cache_bench.sh): compiles between them, wall ratio, and the most
# workers that compiled at once under the machine-wide budget. sm_90, then gfx90a when the ROCm
# runtime is unpacked (the amd stage does that).
# for_arch ARCH DIR: sets BENCH_LD (the library path for a bench of ARCH) and, for an AMD arch,
# unpacks the ROCm runtime into $WORK/DIR and exports HIPACM_HIPRTC_LIBRARY. Fails as unpacking does.
for_arch() {
  BENCH_LD=$HIPACM_LD
  [[ $1 == gfx* ]] || return 0
  HIPACM_HIPRTC_LIBRARY=$(bash tests/device/unpack-rocm.sh "$BUNDLE/rocm" "$WORK/$2") || return
  export HIPACM_HIPRTC_LIBRARY
  BENCH_LD=$BUNDLE:$WORK/$2:$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}
node_bench() {
  local arch=$1
  for_arch "$arch" rocm-node || return
  env LD_LIBRARY_PATH="$BENCH_LD" COUNT=64 RUNS="$NODE_RUNS" ROUNDS="$NODE_ROUNDS" ARCH="$arch" \
    bash bench/shared_cache_bench.sh "$BUNDLE"
}
# The cluster warm-up on this one machine: `hipacm warmup --mpi` on 4 ranks of 4 workers against
# 1 rank of 4 (bench/mpi_warmup_bench.sh), with this machine's own Open MPI.
mpi_bench() {
  local arch=$1
  [[ -x $BUNDLE/hipacm-mpi ]] || { echo "the bundle has no hipacm-mpi (built without MPI)"; return 77; }
  command -v mpirun >/dev/null || { echo "no mpirun on this machine"; return 77; }
  for_arch "$arch" rocm-mpi || return
  # -x: mpirun passes these on to every rank.
  env LD_LIBRARY_PATH="$BENCH_LD" ROUNDS=3 ARCH="$arch" \
    MPIRUN="mpirun -x LD_LIBRARY_PATH -x HIPACM_HIPRTC_LIBRARY -x HIPACM_NVRTC_LIBRARY -x HIPACM_WORKER" \
    bash bench/mpi_warmup_bench.sh "$BUNDLE" 4 4 64
}
# Unchanged programs under `hipacm run` (bench/nvidia/run_intercept_bench.py): the intercept tests'
# ordinary clients over the kernel set with 16 threads, for ARCH (sm_90: NVRTC; gfx90a: hipRTC),
# against their plain single-thread loop.
run_clients_bench() {
  local arch=$1 set=$2 rtc=nvrtc
  [[ $arch == gfx* ]] && rtc=hiprtc
  [[ -d $BUNDLE/clients ]] || { echo "the bundle has no clients/ (made before the run stage)"; return 77; }
  for_arch "$arch" rocm-run || return
  env LD_LIBRARY_PATH="$BENCH_LD" python3 bench/nvidia/run_intercept_bench.py rtc --set "$set" \
    --rtc "$rtc" --arch "$arch" --hipacm "$BUNDLE/hipacm" --clients "$BUNDLE/clients" --threads 16 \
    --rounds "$RUN_ROUNDS" --json "$OUT/run-$rtc-$(basename "$set").json"
}
# CuPy and PyTorch's jiterator, plain and under `hipacm run`.
run_python_bench() {
  local what=$1 module=$2
  shift 2
  python3 -c "import $module" 2>/dev/null || { echo "no $module in this python3"; return 77; }
  env LD_LIBRARY_PATH="$HIPACM_LD" python3 bench/nvidia/run_intercept_bench.py "$what" \
    --set "$SET" --hipacm "$BUNDLE/hipacm" --rounds "$RUN_ROUNDS" \
    --json "$OUT/run-$what${1:+-memory}.json" "$@"
}
NODE_RUNS=${HIPACM_DEVICE_NODE_RUNS:-8}
NODE_ROUNDS=${HIPACM_DEVICE_NODE_ROUNDS:-2}
SET=$WORK/kernel-set
export SET OUT LIBDIR AMD_ROUNDS AMD_ARGS NODE_RUNS NODE_ROUNDS RUN_ROUNDS
export -f amd_bench for_arch node_bench mpi_bench run_clients_bench run_python_bench

stage "environment" 60 env.log bash -c environment_report

if wanted checks; then
  stage "device checks (worker processes)" 120 device-tests.log \
    env LD_LIBRARY_PATH="$HIPACM_LD" "$BUNDLE/hipacm-device-check" --kernels examples/kernels --arch sm_90 --isolation process
  stage "device checks (in-process)" 90 device-tests.log \
    env LD_LIBRARY_PATH="$HIPACM_LD" "$BUNDLE/hipacm-device-check" --kernels examples/kernels --arch sm_90 --isolation in-process
fi

if wanted nvidia || wanted amd || wanted python || wanted run; then
  stage "generate the 64-kernel set" 30 bench.log \
    env LD_LIBRARY_PATH="$HIPACM_LD" "$BUNDLE/hipacm-nvidia-bench" --generate "$SET" --examples examples/kernels --count 64
fi
if wanted nvidia; then
  # shellcheck disable=SC2086  # NVIDIA_ARGS: options, split on purpose
  stage "C++ bench sm_90 (a, d, e1..e16, s16, cache)" 150 bench.log \
    env LD_LIBRARY_PATH="$HIPACM_LD" "$BUNDLE/hipacm-nvidia-bench" --set "$SET" --arch sm_90 --rounds "$NVIDIA_ROUNDS" --threads 16 \
    --scaling 1,2,4,8,16 --timeout 60 --budget 110 --json "$OUT/bench.json" $NVIDIA_ARGS
fi
if wanted amd; then
  stage "C++ bench gfx90a (hipRTC on the CPU)" 210 amd-bench.log bash -c amd_bench
fi
if wanted python; then
  stage "Python bench (Triton b, CuPy c, hipacm h)" 180 python-bench.log \
    env PYTHONPATH="$PWD/bindings/python" HIPACM_LIBRARY="$BUNDLE/libhipacm.so.1" HIPACM_PYBENCH_LD="$HIPACM_LD" \
    python3 bench/nvidia/python_bench.py --set "$SET" --arch sm_90 --threads 16 --rounds "$PYTHON_ROUNDS" \
    --cupy-rounds 2 --timeout 60 --baseline "$OUT/bench.json" --json "$OUT/python-bench.json"
fi
if wanted launch; then
  # hipacm.Module/Function (bindings/python/hipacm/_launch.py) launching sm_90 kernels that hipacm
  # compiled, on DeviceBuffers and CuPy arrays, against CPU references.
  stage "Python launch helper (sm_90)" 90 launch.log \
    env PYTHONPATH="$PWD/bindings/python" HIPACM_LIBRARY="$BUNDLE/libhipacm.so.1" \
    LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    python3 tests/device/python_launch_check.py --arch sm_90
fi
if wanted node; then
  stage "node: $NODE_RUNS warmups of 64 kernels, sm_90" 90 node-bench.log bash -c "node_bench sm_90"
  stage "node: $NODE_RUNS warmups of 64 kernels, gfx90a" 150 node-bench.log bash -c "node_bench gfx90a"
fi
if wanted mpi; then
  stage "mpi: -np 4 x 4 workers vs -np 1, sm_90" 90 mpi-bench.log bash -c "mpi_bench sm_90"
  stage "mpi: -np 4 x 4 workers vs -np 1, gfx90a" 120 mpi-bench.log bash -c "mpi_bench gfx90a"
fi
if wanted run; then
  stage "generate a 256-kernel set" 30 run-bench.log \
    env LD_LIBRARY_PATH="$HIPACM_LD" "$BUNDLE/hipacm-nvidia-bench" --generate "$SET-256" --examples examples/kernels --count 256
  stage "run: 16-thread NVRTC client, 64 kernels" 90 run-bench.log bash -c "run_clients_bench sm_90 $SET"
  stage "run: 16-thread NVRTC client, 256 kernels" 120 run-bench.log bash -c "run_clients_bench sm_90 $SET-256"
  stage "run: 16-thread hipRTC client, 64 kernels" 240 run-bench.log bash -c "run_clients_bench gfx90a $SET"
  stage "run: CuPy RawModules in a second process" 150 run-bench.log bash -c "run_python_bench cupy cupy"
  stage "run: CuPy RawModules, its in-memory cache" 150 run-bench.log \
    bash -c "run_python_bench cupy cupy --cupy-in-memory"
  stage "run: PyTorch jiterator from the cache" 150 run-bench.log bash -c "run_python_bench jit torch"
fi
if wanted demo; then
  stage "Triton slot-bug demo" 60 demo.log \
    env LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" python3 examples/triton_slot_bug/demo.py --arch sm_90
fi

{
  echo
  echo "--- cpu"
  grep -E "^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|L3)" "$OUT/env.log" 2>/dev/null
  echo "--- device checks"
  grep -E "^(GPU:|FAIL|[0-9]+ passed)" "$OUT/device-tests.log" 2>/dev/null | head -40
  echo "--- benchmark sm_90 (C++ and Python rows; vs_a = serial NVRTC median / row median)"
  sed -n '/^variant /,/^(median_s/p' "$OUT/python-bench.log" 2>/dev/null | head -30
  grep -q "^variant " "$OUT/python-bench.log" 2>/dev/null ||
    sed -n '/^variant /,/^(median_s/p' "$OUT/bench.log" 2>/dev/null | head -30
  echo "--- benchmark gfx90a (hipRTC on the CPU cores; vs_a = serial hipRTC median / row median)"
  grep -E "^(hipacm-nvidia-bench:|hipacm backend:|unpacked the ROCm|unpack-rocm:|a library of the ROCm)" \
    "$OUT/amd-bench.log" 2>/dev/null
  sed -n '/^variant /,/^(median_s/p' "$OUT/amd-bench.log" 2>/dev/null | head -30
  grep -E "^(first error of|note: stopped early)" "$OUT/amd-bench.log" 2>/dev/null | head -5
  echo "--- Python launch helper (tests/device/python_launch_check.py)"
  grep -E "^(PASS|FAIL|SKIP|[0-9]+ passed)" "$OUT/launch.log" 2>/dev/null
  echo "--- node scale (bench/shared_cache_bench.sh)"
  grep -E "^(round|median)" "$OUT/node-bench.log" 2>/dev/null
  echo "--- cluster warm-up on one machine (bench/mpi_warmup_bench.sh)"
  grep -vE "^(=====|$)" "$OUT/mpi-bench.log" 2>/dev/null | tail -20
  echo "--- unchanged programs under hipacm run (bench/nvidia/run_intercept_bench.py)"
  grep -E "^(round|[0-9]+ kernels|[a-z0-9]+ +[0-9]+/[0-9]+ |nvrtc|hiprtc|CuPy|PyTorch|no |the )" \
    "$OUT/run-bench.log" 2>/dev/null | head -120
  echo "--- demo"
  grep -E "Triton slot bug|hipacm_active_mode|2nd mode|summary" "$OUT/demo.log" 2>/dev/null
  echo "--- total $(( $(date +%s) - STARTED )) s"
} | tee -a "$SUMMARY"
ls -la "$OUT"
