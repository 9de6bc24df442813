#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a Debian 12 build of hipacm against ROCm 6.4 and ROCm 7.2 in Debian sid roots: the release ctest, every arch comgr lists, and one cache carried from ROCm 6.4 to 7.2.
#
# Usage: scripts/rocm-matrix.sh BUILD_DIR   (as root; docs/ROCM.md explains each step)
#
# The roots come from scripts/rocm-roots.sh (made or reused). For each root, the libraries the
# build's binaries need and the root lacks are copied into a lib directory of the run, as a wheel
# ships them; ROCm libraries never are, because hipacm opens the root's own at run time. Every
# command runs chrooted in the root with the repository, the build and the run's directory bound
# at their own paths.
#
# Environment:
#   HIPACM_ROCM_MATRIX_OUT             the run's directory: bundled libs, per-root logs, reports
#                                      (default BUILD_DIR/rocm-matrix; emptied first)
#   HIPACM_ROCM_MATRIX_COMGR_LIBRARY   passed into the roots as HIPACM_COMGR_LIBRARY (default unset)
#   HIPACM_ROCM_ROOTS                  where the roots are cached (see rocm-roots.sh)
#   HIPACM_ARCH, HIPACM_CACHE, the sanitizer options: passed to ctest as scripts/test.sh sets them
# Exits 1 when any test, arch or check failed, after printing the table of every root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=rocm-roots.sh
. "$here/rocm-roots.sh"

if [ $# != 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
build=$(realpath "$1")
if [ ! -f "$build/CMakeCache.txt" ] || [ ! -x "$build/hipacm" ]; then
  echo "rocm-matrix: $build is not a built hipacm build directory (no CMakeCache.txt or hipacm)" >&2
  exit 2
fi
rocm_roots_require_root rocm-matrix.sh
matrix_start=$SECONDS
roots=(rocm-6.4 rocm-7.2)
out=$(realpath -m "${HIPACM_ROCM_MATRIX_OUT:-$build/rocm-matrix}")
problems=()

bash "$here/rocm-roots.sh" "${roots[@]}"
# Shared: no root is made again while the matrix uses it.
exec 9>"$ROCM_ROOTS_DIR/.lock"
flock -s 9
for root in "${roots[@]}"; do
  if ! rocm_root_current "$root"; then
    echo "rocm-matrix: $root changed while this run waited for it; run again" >&2
    exit 1
  fi
done

# Only a directory this script made (it carries the marker) or an empty one is ever emptied.
if [ -e "$out" ] && [ ! -e "$out/.hipacm-rocm-matrix" ] && [ -n "$(ls -A "$out")" ]; then
  echo "rocm-matrix: $out exists and was not made by this script; choose another HIPACM_ROCM_MATRIX_OUT" >&2
  exit 2
fi
rm -rf --one-file-system "$out"
mkdir -p "$out"
touch "$out/.hipacm-rocm-matrix"

binds=(--bind "$repo")
case $build/ in "$repo"/*) ;; *) binds+=(--bind "$build") ;; esac
case $out/ in "$repo"/* | "$build"/*) ;; *) binds+=(--bind "$out") ;; esac
# The CTestTestfiles include GoogleTestAddTests.cmake from the cmake that configured the build.
cmake_root=$(sed -n 's/^CMAKE_ROOT:INTERNAL=//p' "$build/CMakeCache.txt")
binds+=(--bind "$cmake_root")

rocm_test_environment
# The CLI checks below use the cache (or say --no-cache) and name their archs themselves.
rocm_env=()
for var in "${ROCM_TEST_ENV[@]}"; do
  # A compile service would outlive the root's namespace until it idles out.
  case $var in HIPACM_COMGR_LIBRARY=* | HIPACM_ISOLATION=*) rocm_env+=("$var") ;; esac
done

# Runs a command in a root with the bundled libs and ROCm knobs: in_root ROOT [VAR=VALUE]... CMD...
in_root() {
  local root=$1
  shift
  rocm_root_exec "$ROCM_ROOTS_DIR/$root" "${binds[@]}" LD_LIBRARY_PATH="$out/$root/lib" \
    "${rocm_env[@]}" "$@"
}

# Reads the JSON the CLI wrote: processors DOCTOR | archs DIR LIST | cache FIRST SECOND THIRD.
report() {
  /usr/bin/python3 - "$@" <<'EOF'
import json, sys

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"no report from the CLI: {e}")

what, paths = sys.argv[1], sys.argv[2:]
if what == "processors":
    comgr = [c for c in load(paths[0])["checks"] if c["name"] == "comgr"]
    print(",".join((comgr[0]["details"].get("processors") or []) if comgr else []))
elif what == "archs":
    # Per arch: warmup's exit status and report. Exit 2 without a report is a refused arch.
    compiled, refused, failed = [], [], []
    for arch in paths[1].split(","):
        try:
            with open(f"{paths[0]}/{arch}.rc") as f:
                status = int(f.read())
        except (OSError, ValueError):
            status = None
        if status == 2:
            refused.append(arch)
            continue
        try:
            kernels = load(f"{paths[0]}/{arch}.json")["kernels"]
        except SystemExit:
            kernels = []
        ok = status == 0 and kernels and all(k["status"] == "ok" for k in kernels)
        (compiled if ok else failed).append(arch)
    print(len(compiled), len(compiled) + len(refused) + len(failed), len(refused),
          ",".join(failed) or "-", ",".join(refused) or "-")
elif what == "cache":
    first, second, third = (load(p)["totals"] for p in paths)
    n = first["kernels"]
    checks = [
        (n > 0 and first["compiled"] == n, f"ROCm 6.4 compiled {first['compiled']} of {n}"),
        (second["kernels"] == n and second["cache_hits"] == 0 and second["compiled"] == n,
         f"ROCm 7.2 then recompiled {second['compiled']} of {second['kernels']}"
         f" with {second['cache_hits']} cache hits (expected {n} and 0)"),
        (third["kernels"] == n and third["cache_hits"] == n,
         f"ROCm 7.2 again found {third['cache_hits']} of {third['kernels']} in the cache (expected {n})"),
    ]
    print("; ".join(text for _, text in checks))
    sys.exit(0 if all(ok for ok, _ in checks) else 1)
EOF
}

# The ELF files of the build: its binaries, libraries and test executables.
elf_files() {
  local file magic
  find "$build" \( -path "$out" -o -name CMakeFiles \) -prune -o -type f \
    \( -perm -u+x -o -name '*.so*' \) -print | sort | while IFS= read -r file; do
    IFS= read -r -d '' -n 4 magic <"$file" || true
    if [ "$magic" = $'\x7fELF' ]; then echo "$file"; fi
  done
}

mapfile -t elves < <(elf_files)
# Every library the build's ELF files load on this machine, as "soname path".
for elf in "${elves[@]}"; do ldd "$elf" 2>/dev/null || true; done |
  awk '$2 == "=>" { print $1, ($3 == "not" ? "not-found" : $3) }' | sort -u >"$out/host-libraries.txt"
rocm_library='^lib(amdhip64|hiprtc|amd_comgr|hsa-runtime64|hsakmt|rocm|LLVM|clang-cpp)'
# NVIDIA's libraries are a vendor's too: NVRTC without its builtins, copied into a root, would be
# found and then fail. The roots have none, so the NVIDIA paths see none, as on a ROCm machine.
nvidia_library='^lib(nvrtc|cuda)[.-]'
# The intercept tests' clients are ordinary programs built against this machine's vendor libraries
# (linked to ROCm 5's libamdhip64.so.5 and to NVRTC); in a root they cannot start, and their tests
# use the dlopen client or say that NVRTC is missing (tests/intercept/conftest.py).
vendor_clients="$build/tests/intercept/hipacm_intercept_"

# Copies into OUT/ROOT/lib each library the root does not provide; checks that everything loads.
bundle() {
  local root=$1 soname path
  local lib=$out/$root/lib
  mkdir -p "$lib"
  chroot "$ROCM_ROOTS_DIR/$root" /sbin/ldconfig -p | awk 'NR > 1 { print $1 }' | sort -u \
    >"$out/$root/root-libraries.txt"
  while read -r soname path; do
    case $path in
      not-found) problems+=("$root: $soname is not found even on this machine"); continue ;;
      "$repo"/* | "$build"/*) continue ;; # hipacm's own, found through the RUNPATH
    esac
    if [[ $soname =~ $rocm_library ]]; then
      echo "rocm-matrix: $root: $soname is ROCm's: left to the root"
    elif [[ $soname =~ $nvidia_library ]]; then
      echo "rocm-matrix: $root: $soname is NVIDIA's: left out"
    elif ! grep -qxF "$soname" "$out/$root/root-libraries.txt"; then
      cp -L "$path" "$lib/$soname"
      echo "rocm-matrix: $root: bundled $soname from $path"
    fi
  done <"$out/host-libraries.txt"
  in_root "$root" /bin/bash -c 'for f; do ldd "$f" | sed "s|^|$f: |"; done' ldd "${elves[@]}" \
    >"$out/$root/ldd.txt" 2>&1 || true
  local missing
  missing=$(grep 'not found' "$out/$root/ldd.txt" | grep -vF "$vendor_clients" || true)
  if [ -n "$missing" ]; then
    problems+=("$root: libraries not found in the root: $(tr '\n' ';' <<<"$missing")")
  fi
}

# The release ctest in a root; leaves "passed failed seconds" in OUT/ROOT/ctest.counts.
root_ctest() {
  local root=$1 rc=0 start=$SECONDS counts failed total
  local log=$out/$root/ctest.log
  echo "=== rocm-matrix: $root: ctest (log $log) ==="
  in_root "$root" "${ROCM_TEST_ENV[@]}" ctest --test-dir "$build" -j "$(nproc)" --timeout 600 \
    -LE "$ROCM_ROOTS_CTEST_EXCLUDE" 2>&1 | tee "$log" || rc=$?
  counts=$(sed -n 's/.* \([0-9][0-9]*\) tests* failed out of \([0-9][0-9]*\).*/\1 \2/p' "$log" | tail -n 1)
  sed -n '/The following tests FAILED:/,$p' "$log" | sed -n 's/^[[:space:]]*[0-9][0-9]* - //p' \
    >"$out/$root/failed-tests.txt"
  # What each failed test printed, read back from ctest's own record before the next root's run
  # replaces it; the end of the run prints it again, where a CI log's tail shows it.
  /usr/bin/python3 "$repo/scripts/ctest_log.py" "$build" >"$out/$root/failed-output.txt" || true
  if [ -z "$counts" ]; then
    problems+=("$root: ctest ended (status $rc) without a summary")
    counts="0 0"
  fi
  read -r failed total <<<"$counts"
  echo "$((total - failed)) $failed $((SECONDS - start))" >"$out/$root/ctest.counts"
  if [ "$rc" != 0 ] || [ "$failed" != 0 ]; then problems+=("$root: $failed of $total tests failed"); fi
}

# One example kernel compiled, arch by arch, for every processor the root's comgr lists; leaves
# "compiled listed refused" in OUT/ROOT/archs.counts. One warmup per arch, because warmup refuses
# a whole run (exit 2) for one arch hipacm will not compile: those are counted as refused, with
# the reason in their log, and only an accepted arch that then fails to compile is a failure.
root_archs() {
  local root=$1 archs counts compiled listed refused failed_archs refused_archs start=$SECONDS
  local dir=$out/$root/archs
  mkdir -p "$dir"
  in_root "$root" HIPACM_CACHE=off "$build/hipacm" doctor --json >"$out/$root/doctor.json" \
    2>"$out/$root/doctor.log" || true
  archs=$(report processors "$out/$root/doctor.json" 2>>"$out/$root/doctor.log" || true)
  if [ -z "$archs" ]; then
    problems+=("$root: hipacm doctor lists no processors (comgr not found?); see $out/$root/doctor.json")
    echo "0 0 0" >"$out/$root/archs.counts"
    return
  fi
  tr ',' '\n' <<<"$archs" | in_root "$root" xargs -P "$(nproc)" -I '{}' /bin/sh -c \
    '"$1" warmup "$2" --arch "$4" --no-cache -q --json "$3/$4.json" >"$3/$4.log" 2>&1; echo $? >"$3/$4.rc"' \
    warmup "$build/hipacm" "$repo/examples/kernels/saxpy.hip" "$dir" '{}' || true
  counts=$(report archs "$dir" "$archs")
  read -r compiled listed refused failed_archs refused_archs <<<"$counts"
  echo "$compiled $listed $refused" >"$out/$root/archs.counts"
  echo "rocm-matrix: $root: $compiled of $listed archs compiled saxpy.hip in $((SECONDS - start)) s; refused: $refused_archs"
  echo "$refused_archs" >"$out/$root/archs-refused.txt"
  if [ "$failed_archs" != - ]; then problems+=("$root: archs that did not compile: $failed_archs (logs in $dir)"); fi
  # A refusal that is not about the arch (a missing file, a broken CLI) would refuse them all.
  if [ ! -s "$dir/gfx90a.json" ] || ! grep -qx 0 "$dir/gfx90a.rc"; then
    problems+=("$root: even gfx90a did not compile; see $dir/gfx90a.log")
  fi
}

# The same cache directory, filled under ROCm 6.4, must miss under 7.2 and then hit.
cross_rocm_cache() {
  local dir=$out/cross-rocm-cache run root result start=$SECONDS
  mkdir -p "$dir/cache"
  for run in rocm-6.4:first rocm-7.2:second rocm-7.2:third; do
    root=${run%%:*}
    in_root "$root" "$build/hipacm" warmup "$repo/examples/kernels" --arch gfx90a \
      --cache-dir "$dir/cache" -q --json "$dir/${run#*:}.json" >"$dir/${run#*:}.log" 2>&1 || true
  done
  echo "rocm-matrix: the three warmups took $((SECONDS - start)) s"
  if result=$(report cache "$dir/first.json" "$dir/second.json" "$dir/third.json" 2>&1); then
    echo "ok: $result" >"$dir/result.txt"
  else
    echo "FAILED: $result" >"$dir/result.txt"
    problems+=("cross-ROCm cache: $result (logs in $dir)")
  fi
}

# comgr 7.x's own cache stays off in hipacm's workers: tests/hip_backend/process/comgr_cache_check.sh.
root_comgr_cache() {
  local root=$1 rc=0
  in_root "$root" bash "$repo/tests/hip_backend/process/comgr_cache_check.sh" "$build/hipacm" \
    "$repo/examples/kernels" >"$out/$root/comgr-cache.log" 2>&1 || rc=$?
  case $rc in
    0) echo "ok" >"$out/$root/comgr-cache.txt" ;;
    77) echo "skipped: this comgr keeps no cache" >"$out/$root/comgr-cache.txt" ;;
    *)
      echo "FAILED" >"$out/$root/comgr-cache.txt"
      problems+=("$root: comgr's own cache was left on in the workers (log: $out/$root/comgr-cache.log)")
      ;;
  esac
}

# Unmodified programs under `hipacm run`, over the MIOpen-style fixtures: the intercept tests'
# dlopen client, loading the root's libhiprtc.so.N by soname, and their linked client, linked here
# against that file as a program built for this ROCm would be (its hipRTC calls are the same C
# API). For each, two plain runs must agree (the library's own determinism); a cold run under
# hipacm run (compiled in hipacm's workers) and a fresh process served from its cache must each
# equal them, and the second run's --stats must say every compile was a cache hit; so must a
# fresh process after `hipacm warmup` of what the cold run recorded, in another cache. Then the
# failure logs (root_run_failures). (The suite's intercept tests run on this machine's ROCm 5.2.3.
# Under hipRTC 6.4 and 7.2 the code object of a program with two or more name expressions lists
# their symbols in an order that changes from one compile to the next, in one process and across
# processes (two orders in five compiles of one program), so two plain runs differ too: the
# fixtures without name expressions are compared here.)
root_run() {
  local root=$1 release=${1#rocm-} kind
  local soname=libhiprtc.so.${release%%.*}
  local linked=$out/$root/hipacm_intercept_linked_client
  if ! c++ -o "$linked" "$build/tests/intercept/libhipacm_intercept_linked_client_main.a" \
    "$build/tests/intercept/libhipacm_intercept_client_common.a" \
    "$ROCM_ROOTS_DIR/$root/usr/lib/x86_64-linux-gnu/$soname" -lnettle -pthread \
    -Wl,--allow-shlib-undefined >"$out/$root/linked-client.log" 2>&1; then
    problems+=("$root: the linked client did not link against $soname (log: $out/$root/linked-client.log)")
    linked=/nonexistent
  fi
  root_run_client "$root" "$soname" dlopen \
    "$build/tests/intercept/hipacm_intercept_dlopen_client" --library "$soname"
  root_run_client "$root" "$soname" linked "$linked"
}

# root_run_client ROOT SONAME KIND CLIENT...: one client's runs, into $out/ROOT/run/KIND.
root_run_client() {
  local root=$1 soname=$2 name=$3 kind
  shift 3
  local dir=$out/$root/run/$name
  local client=("$@" --only tensor_ops --only dropout --only pooling
    "$repo/tests/fixtures/miopen_style/manifest.json")
  mkdir -p "$dir/cache"
  for kind in plain-1 plain-2; do
    in_root "$root" "${client[@]}" >"$dir/$kind.dump" 2>"$dir/$kind.log" || true
  done
  # The cold run compiles on four threads: in-process, hipRTC 6.4 and 7.2 would take them one at
  # a time; served, they compile side by side in hipacm's workers, and the dump must not change.
  # It also records what it compiles (HIPACM_RECORD), for a warm-up of another cache.
  in_root "$root" HIPACM_CACHE=readwrite HIPACM_CACHE_DIR="$dir/cache" \
    HIPACM_RECORD="$dir/record.jsonl" "$build/hipacm" run \
    --stats -- "$1" --threads 4 "${client[@]:1}" >"$dir/cold.dump" 2>"$dir/cold.log" || true
  in_root "$root" HIPACM_CACHE=readwrite HIPACM_CACHE_DIR="$dir/cache" "$build/hipacm" run \
    --stats -- "${client[@]}" >"$dir/cached.dump" 2>"$dir/cached.log" || true
  # Record, warm up, run: the record warms a fresh cache, which then serves a fresh process.
  in_root "$root" "$build/hipacm" warmup "$dir/record.jsonl" --cache-dir "$dir/warmed" -q \
    >"$dir/warmup.log" 2>&1 || true
  in_root "$root" HIPACM_CACHE=readwrite HIPACM_CACHE_DIR="$dir/warmed" "$build/hipacm" run \
    --stats -- "${client[@]}" >"$dir/warmed.dump" 2>"$dir/warmed.log" || true
  local jobs result
  jobs=$(grep -c '^job ' "$dir/plain-1.dump" || true)
  if [ "${jobs:-0}" = 0 ] || ! cmp -s "$dir/plain-1.dump" "$dir/plain-2.dump"; then
    result="FAILED: plain runs gave no jobs or differed"
  elif ! cmp -s "$dir/plain-1.dump" "$dir/cold.dump"; then
    result="FAILED: the cold run under hipacm run differs from plain"
  elif ! cmp -s "$dir/plain-1.dump" "$dir/cached.dump"; then
    result="FAILED: the run served from the cache differs from plain"
  elif ! grep -q "hipacm run: $jobs compiles: $jobs cache hits" "$dir/cached.log"; then
    result="FAILED: the second run was not all cache hits: $(grep 'hipacm run:' "$dir/cached.log")"
  elif ! cmp -s "$dir/plain-1.dump" "$dir/warmed.dump" ||
    ! grep -q "hipacm run: $jobs compiles: $jobs cache hits" "$dir/warmed.log"; then
    result="FAILED: the run after a warm-up of the record was not all cache hits equal to plain:"
    result="$result $(grep 'hipacm run:' "$dir/warmed.log") (warm-up: $dir/warmup.log)"
  else
    result="ok: $jobs jobs through $soname equal plain, cold, from the cache and recorded"
    result="$result; $(root_run_failures "$root" "$dir/failing" "$@")"
  fi
  echo "$result" >"$dir/result.txt"
  echo "rocm-matrix: $root: hipacm run, $name client: $result"
  case $result in ok:*"; ok:"*) ;; *) problems+=("$root: hipacm run, $name client: $result (logs in $dir)") ;; esac
}

# The dump of a run with comgr's per-compile directory names made one (six random hex digits, and
# on ROCm 7 the process id and comgr's count of its directories), and each log's size less what
# those names changed, so the size is still compared: canonical_dump IN OUT.
canonical_dump() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import re, sys

NAME = re.compile(r"/comgr-(\d+-\d+-)?[0-9a-f]{6}/")
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")
size_at = None
for i, line in enumerate(lines):
    if line.startswith("  log_size "):
        size_at = i
    elif line.startswith("  | ") and size_at is not None:
        canonical = NAME.sub("/comgr-X/", line)
        shrunk = len(line.encode()) - len(canonical.encode())
        lines[i] = canonical
        head, _, size = lines[size_at].rpartition(" ")
        if shrunk and size.isdigit():
            lines[size_at] = f"{head} {int(size) - shrunk}"
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines))
EOF
}

# Failure logs, headers given with the program and warnings included (the intercept tests'
# failing kernels): two plain runs, a cold run and one from the cache, all under one TMPDIR, must
# give the same dump but for comgr's directory names. (comgr 7.2 compiles the preprocessed source
# when its cache is on, as it is by default: its logs quote the expanded lines.)
# root_run_failures ROOT DIR CLIENT...: prints one line.
root_run_failures() {
  local root=$1 dir=$2 kind
  shift 2
  local client=("$@" "$repo/tests/intercept/clients/failing_kernels/manifest.json")
  mkdir -p "$dir/cache" "$dir/tmp"
  for kind in plain-1 plain-2; do
    in_root "$root" TMPDIR="$dir/tmp" "${client[@]}" >"$dir/$kind.raw" 2>"$dir/$kind.log" || true
  done
  for kind in cold cached; do
    in_root "$root" TMPDIR="$dir/tmp" HIPACM_CACHE=readwrite HIPACM_CACHE_DIR="$dir/cache" \
      "$build/hipacm" run --stats -- "${client[@]}" >"$dir/$kind.raw" 2>"$dir/$kind.log" || true
  done
  for kind in plain-1 plain-2 cold cached; do canonical_dump "$dir/$kind.raw" "$dir/$kind.dump"; done
  local failed
  failed=$(grep -c 'compile HIPRTC_ERROR_COMPILATION' "$dir/plain-1.dump" || true)
  if [ "${failed:-0}" = 0 ] || ! cmp -s "$dir/plain-1.dump" "$dir/plain-2.dump"; then
    echo "FAILED: plain runs of the failing kernels gave no failure or differed"
  elif ! cmp -s "$dir/plain-1.dump" "$dir/cold.dump"; then
    echo "FAILED: a failure log of the cold run under hipacm run differs from plain"
  elif ! cmp -s "$dir/plain-1.dump" "$dir/cached.dump"; then
    echo "FAILED: a failure log of the second run under hipacm run differs from plain"
  else
    echo "ok: $failed failure logs equal plain, cold and again"
  fi
}

# hipRTC 7.2 with ROCm 6.4's comgr named by HIPACM_COMGR_LIBRARY: refused, exit 3, saying why.
mixed_pair() {
  local dir=$out/mixed-pair rc=0
  mkdir -p "$dir"
  cp -L "$ROCM_ROOTS_DIR/rocm-6.4/usr/lib/x86_64-linux-gnu/libamd_comgr.so.3" "$dir/libamd_comgr.so.3"
  in_root rocm-7.2 HIPACM_COMGR_LIBRARY="$dir/libamd_comgr.so.3" "$build/hipacm" warmup \
    "$repo/examples/kernels/saxpy.hip" --arch gfx90a --no-cache -q >"$dir/warmup.log" 2>&1 || rc=$?
  if [ "$rc" = 3 ] && grep -q "mixed ROCm libraries" "$dir/warmup.log"; then
    echo "ok: refused (exit 3, mixed ROCm libraries)" >"$dir/result.txt"
  else
    echo "FAILED: exit $rc" >"$dir/result.txt"
    problems+=("mixed pair: hipRTC 7.2 with ROCm 6.4's comgr was not refused (exit $rc; log: $dir/warmup.log)")
  fi
}

for root in "${roots[@]}"; do
  mkdir -p "$out/$root"
  bundle "$root"
  root_ctest "$root"
  root_archs "$root"
  root_comgr_cache "$root"
  root_run "$root"
done
echo "=== rocm-matrix: one cache from ROCm 6.4 to 7.2 ==="
cross_rocm_cache
echo "=== rocm-matrix: a mixed pair (hipRTC 7.2, comgr of 6.4) ==="
mixed_pair

{
  printf '%-9s %-14s %-20s %7s %7s %8s %6s %8s\n' ROCm hipRTC comgr passed failed "ctest s" archs refused
  for root in "${roots[@]}"; do
    read -r passed failed seconds <"$out/$root/ctest.counts"
    read -r archs_ok archs_total archs_refused <"$out/$root/archs.counts"
    hiprtc=$(rocm_root_packages "$ROCM_ROOTS_DIR/$root" 'libhiprtc[0-9]*' | awk 'NR == 1 { print $2 }')
    comgr=$(rocm_root_packages "$ROCM_ROOTS_DIR/$root" 'libamd-comgr[0-9]*' | awk 'NR == 1 { print $2 }')
    printf '%-9s %-14s %-20s %7s %7s %8s %6s %8s\n' "$root" "${hiprtc:-none}" "${comgr:-none}" \
      "$passed" "$failed" "$seconds" "$archs_ok/$archs_total" "$archs_refused"
  done
  echo "cross-ROCm cache: $(cat "$out/cross-rocm-cache/result.txt")"
  echo "mixed pair: $(cat "$out/mixed-pair/result.txt")"
  for root in "${roots[@]}"; do
    echo "comgr's own cache in $root's workers: $(cat "$out/$root/comgr-cache.txt")"
  done
  for root in "${roots[@]}"; do
    for kind in dlopen linked; do
      echo "hipacm run in $root, $kind client: $(cat "$out/$root/run/$kind/result.txt")"
    done
  done
  for root in "${roots[@]}"; do
    echo "archs hipacm refused in $root: $(cat "$out/$root/archs-refused.txt" 2>/dev/null)"
  done
  for root in "${roots[@]}"; do
    if [ -s "$out/$root/failed-tests.txt" ]; then
      echo "failed in $root:"
      sed 's/^/  /' "$out/$root/failed-tests.txt"
    fi
  done
  echo "ROCm matrix: $((SECONDS - matrix_start)) s; logs in $out"
} | tee "$out/summary.txt"
if [ ${#problems[@]} != 0 ]; then
  for root in "${roots[@]}"; do
    if [ -s "$out/$root/failed-output.txt" ]; then
      echo "rocm-matrix: $root: what its failed tests printed:" >&2
      cat "$out/$root/failed-output.txt" >&2
    fi
  done
  printf 'rocm-matrix: %s\n' "${problems[@]}" >&2
  exit 1
fi
