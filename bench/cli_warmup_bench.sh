#!/usr/bin/env bash
# cli_warmup_bench.sh - times `hipacm warmup` on N distinct kernels: cold (empty cache), then warm.
#
# Usage: bench/cli_warmup_bench.sh [BUILD_DIR]      (default build/release)
# Environment: COUNT (default 64), ARCH (default gfx90a), JOBS (default 0 = one per core).
#
# The kernels are the examples, copied COUNT/16 times; each copy gets a comment naming its
# variant and a -DHIPACM_BENCH_VARIANT=<n> option directive (kernel_set.cpp's scheme), so no
# two are the same compile and every one has its own cache key. The cache lives in a fresh
# temporary directory: the first run is cold, the second finds every kernel in it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
hipacm="$build/hipacm"
count=${COUNT:-64}
arch=${ARCH:-gfx90a}
jobs=${JOBS:-0}
[[ -x $hipacm ]] || { echo "no $hipacm: build the hipacm-cli target first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
examples=(examples/kernels/*.hip)
made=0
for ((variant = 0; made < count; ++variant)); do
  dir="$work/kernels/v$variant"
  mkdir -p "$dir"
  cp -r examples/kernels/include "$dir/"
  for source in "${examples[@]}"; do
    ((made < count)) || break
    # The leading // block carries the directives, so the new lines go on top of it.
    { echo "// bench variant $variant"
      echo "// hipacm: option=-DHIPACM_BENCH_VARIANT=$variant"
      cat "$source"; } > "$dir/$(basename "$source")"
    made=$((made + 1))
  done
done

export HIPACM_CACHE_DIR="$work/cache"
for run in cold warm; do
  start=$(date +%s.%N)
  "$hipacm" warmup "$work/kernels" --arch "$arch" --jobs "$jobs" --quiet \
    --json "$work/$run.json" >/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 - "$work/$run.json" "$run" "$start" "$end" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
t = doc["totals"]
process = float(sys.argv[4]) - float(sys.argv[3])
speedup = "n/a" if t["speedup"] is None else f"{t['speedup']:.2f}x"
print(f"{sys.argv[2]:>4}: {t['kernels']} kernels, {t['cache_hits']} cache hits, "
      f"{t['compiled']} compiled, {t['failed']} failed; warmup wall {t['wall_seconds']:.2f} s, "
      f"process {process:.2f} s, compile sum {t['compile_seconds']:.2f} s, "
      f"speedup against serial {speedup}")
PY
done
