#!/usr/bin/env bash
# The main job: builds hipacm, then compiles every example kernel asynchronously and prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPACM_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j "$(nproc)" --target hipacm hipacm-worker hipacm-warm-examples
for arch in ${HIPACM_ARCHS:-gfx90a gfx1030}; do
  build/release/hipacm-warm-examples --arch "$arch" "$@"
done
