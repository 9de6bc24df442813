#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# python_bench_smoke.sh - smoke test of python_bench.py's hipacm rows for one arch: 4 generated
# kernels through the Python binding with default settings (so through the compile service), every
# h row compiling all four, and no compile service left running afterwards.
#
# usage: python_bench_smoke.sh BENCH LIBHIPACM ARCH EXAMPLES_DIR SOURCE_DIR
# Exit status: 0 passed; 77 the arch's compiler is not on this machine; 1 failed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_smoke_rows.sh" || exit 1
bench=${1:?usage: python_bench_smoke.sh BENCH LIBHIPACM ARCH EXAMPLES_DIR SOURCE_DIR}
library=${2:?usage: python_bench_smoke.sh BENCH LIBHIPACM ARCH EXAMPLES_DIR SOURCE_DIR}
arch=${3:?usage: python_bench_smoke.sh BENCH LIBHIPACM ARCH EXAMPLES_DIR SOURCE_DIR}
examples=${4:?usage: python_bench_smoke.sh BENCH LIBHIPACM ARCH EXAMPLES_DIR SOURCE_DIR}
source_dir=${5:?usage: python_bench_smoke.sh BENCH LIBHIPACM ARCH EXAMPLES_DIR SOURCE_DIR}
dir=$(mktemp -d "${TMPDIR:-/tmp}/hipacm-pybench-smoke.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

"$bench" --generate "$dir/set" --examples "$examples" --count 4 || exit 1
# The bench's children choose the service themselves (h: the default, h-own: off).
env -u HIPACM_COMPILE_SERVICE -u HIPACM_ISOLATION TMPDIR="$dir" PYTHONPATH="$source_dir/bindings/python" \
  HIPACM_LIBRARY="$library" /usr/bin/python3 "$source_dir/bench/nvidia/python_bench.py" \
  --set "$dir/set" --arch "$arch" --threads 2 --rounds 1 --only hipacm --timeout 120 \
  --json "$dir/result.json" > "$dir/log" 2>&1
rc=$?
cat "$dir/log"
(( rc == 0 )) || exit 1
require_rows "$dir/log" "$arch" "cannot open (hipRTC|NVRTC)|NVRTC unavailable|no NVRTC|no compiler" \
  h-first h h-warm h-own h-own-warm
# The bench stops the services it started, and waits for them (their runtime directory was under
# $dir): none may be left, not even one on its way out.
if pgrep -f -- "--service $dir/" >/dev/null; then
  echo "FAIL: a compile service of the bench is still running:"
  pgrep -af -- "--service $dir/"
  exit 1
fi
echo "PASS: every h row compiled 4 of 4 kernels for $arch, and no service was left running"
