#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds hipacm with Debian sid's compiler and libraries in a copy of the ROCm 6.4 root, then runs its release ctest there.
#
# Usage: scripts/rocm-sid-build.sh [BUILD_DIR]   (as root; BUILD_DIR defaults to build/rocm-sid)
#
# The root is rocm-6.4-build from scripts/rocm-roots.sh: the rocm-6.4 root copied, plus sid's g++,
# cmake, Ninja and hipacm's build dependencies (Boost, OpenSSL, SQLite, CLI11, nlohmann-json, fmt,
# GoogleTest); it is cached like the other roots. BUILD_DIR is configured by sid's cmake inside
# the root, so it is only usable there. The tests run as in scripts/rocm-matrix.sh, with the same
# environment and the same labels left out, but against sid's own libraries: nothing is bundled.
# scripts/test.sh runs this after the matrix when HIPACM_ROCM_SID_BUILD=on.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=rocm-roots.sh
. "$here/rocm-roots.sh"

rocm_roots_require_root rocm-sid-build.sh
build=$(realpath -m "${1:-$repo/build/rocm-sid}")
start=$SECONDS
bash "$here/rocm-roots.sh" rocm-6.4-build
exec 9>"$ROCM_ROOTS_DIR/.lock"
flock -s 9
if ! rocm_root_current rocm-6.4-build; then
  echo "rocm-sid-build: the rocm-6.4-build root changed while this run waited for it; run again" >&2
  exit 1
fi

mkdir -p "$build"
binds=(--bind "$repo")
case $build/ in "$repo"/*) ;; *) binds+=(--bind "$build") ;; esac
in_build_root() { rocm_root_exec "$ROCM_ROOTS_DIR/rocm-6.4-build" "${binds[@]}" "$@"; }

echo "=== rocm-sid-build: configure and build in $build ==="
in_build_root cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
in_build_root cmake --build "$build" -j "$(nproc)"
in_build_root g++ --version | sed -n 1p
built=$SECONDS
echo "rocm-sid-build: root ready and built in $((built - start)) s"

echo "=== rocm-sid-build: ctest ==="
rocm_test_environment
status=0
in_build_root "${ROCM_TEST_ENV[@]}" ctest --test-dir "$build" -j "$(nproc)" --timeout 600 \
  -LE "$ROCM_ROOTS_CTEST_EXCLUDE" || status=$?
echo "rocm-sid-build: ctest took $((SECONDS - built)) s; the whole run $((SECONDS - start)) s"
exit "$status"
