#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A built library holds no path of the machine that built it (-ffile-prefix-map, on by default):
# the build's own libhipacm.so.1, and an object compiled with debug info (RelWithDebInfo, the
# default build type) in a scratch configure, which without the map does hold the paths.
#   build_paths_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd) source_dir=$(cd "$2" && pwd)
fail() { echo "build_paths_test: $*" >&2; exit 1; }
paths_in() { strings -a "$1" | grep -c -F -e "$source_dir" -e "$2" || true; }

[[ -f $build_dir/libhipacm.so.1 ]] || fail "no libhipacm.so.1 in $build_dir"
count=$(paths_in "$build_dir/libhipacm.so.1" "$build_dir")
[[ $count == 0 ]] || fail "$build_dir/libhipacm.so.1 holds $count strings with the source or build path"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
object=support/CMakeFiles/hipacm_support.dir/failure.cpp.o
compile() {  # compile DIR [cmake options]: one object of the library, RelWithDebInfo
  local dir=$1; shift
  cmake -S "$source_dir" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPACM_BUILD_TESTS=OFF \
    -DHIPACM_BUILD_BENCH=OFF -DHIPACM_BUILD_EXAMPLES=OFF -DHIPACM_WITH_MPI=OFF "$@" >/dev/null
  ninja -C "$dir" "$object" >/dev/null
}
compile "$scratch/mapped"
count=$(paths_in "$scratch/mapped/$object" "$scratch/mapped")
[[ $count == 0 ]] || fail "a RelWithDebInfo object holds $count strings with the source or build path"
# The check sees the paths where they are: the same object without the map holds them.
compile "$scratch/unmapped" -DHIPACM_FILE_PREFIX_MAP=OFF
unmapped=$(paths_in "$scratch/unmapped/$object" "$scratch/unmapped")
((unmapped > 0)) || fail "without -ffile-prefix-map the object holds no path: the check cannot see them"
echo "build_paths_test: ok (libhipacm.so.1: 0; RelWithDebInfo object: 0 mapped, $unmapped unmapped)"
