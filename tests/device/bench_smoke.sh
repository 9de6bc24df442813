#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_smoke.sh - smoke test of hipacm-nvidia-bench for one arch: 4 generated kernels, the serial
# row and a one-worker row, each of which must compile all four.
#
# usage: bench_smoke.sh BENCH ARCH EXAMPLES_DIR
# Exit status: 0 passed; 77 the arch's compiler (NVRTC or hipRTC) is not on this machine; 1 failed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_smoke_rows.sh" || exit 1
bench=${1:?usage: bench_smoke.sh BENCH ARCH EXAMPLES_DIR}
arch=${2:?usage: bench_smoke.sh BENCH ARCH EXAMPLES_DIR}
examples=${3:?usage: bench_smoke.sh BENCH ARCH EXAMPLES_DIR}
dir=$(mktemp -d "${TMPDIR:-/tmp}/hipacm-bench-smoke.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

"$bench" --generate "$dir/set" --examples "$examples" --count 4 || exit 1
"$bench" --set "$dir/set" --arch "$arch" --rounds 1 --threads 1 --scaling 1 \
  --skip a-warm,d1,e1-warm,cache --timeout 120 --budget 120 --json "$dir/result.json" \
  > "$dir/log" 2>&1
rc=$?
cat "$dir/log"
(( rc == 0 )) || exit 1
[[ -s $dir/result.json ]] || { echo "FAIL: no JSON written"; exit 1; }
require_rows "$dir/log" "$arch" \
  "cannot open (hipRTC|NVRTC)|needs (hipRTC|NVRTC)|NVRTC unavailable|no NVRTC" a e1
echo "PASS: rows a and e1 compiled 4 of 4 kernels for $arch"
