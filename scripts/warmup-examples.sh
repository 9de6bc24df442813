#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: builds hipacm, then warms every example kernel through the hipacm tool twice:
# the first run compiles what the persistent cache lacks, the second is served from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
# The configuration scripts/test.sh gives build/release, so that the README's two lines share one
# build: a different build type or flag here would make each of them rebuild everything, and
# HIPACM_BUILD_TESTS=OFF would stay in the cache and leave the test line with no tests.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPACM_WERROR=ON >/dev/null
cmake --build build/release -j "$(nproc)" --target hipacm hipacm-worker hipacm-cli
archs=${HIPACM_ARCHS:-gfx90a gfx1030}
# Extra arguments go to `hipacm warmup` (e.g. --jobs 4, --json report.json, --no-cache).
# The tool reports the warm-up's own wall time; `time` adds the whole command's, start-up
# included, which is what a job script waits for.
TIMEFORMAT='whole command: %R s'
echo "== hipacm warmup examples/kernels --arch ${archs// /,}"
time build/release/hipacm warmup examples/kernels --arch "${archs// /,}" "$@"
echo
echo "== the same command again: every kernel now comes from the persistent cache"
time build/release/hipacm warmup examples/kernels --arch "${archs// /,}" "$@"
