#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# conda-build's build step for meta.yaml: configure, build and install with CMake into $PREFIX.
set -euo pipefail
# CMAKE_ARGS (from conda's compiler packages) is a list of options: split on purpose.
# shellcheck disable=SC2086
cmake -S "$SRC_DIR" -B build -G Ninja ${CMAKE_ARGS:-} -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib -DHIPACM_BUILD_TESTS=OFF \
  -DHIPACM_BUILD_BENCH=OFF -DHIPACM_BUILD_EXAMPLES=OFF -DHIPACM_BUILD_MANPAGES=OFF \
  -DHIPACM_WITH_MPI=OFF
cmake --build build -j "${CPU_COUNT:-2}"
cmake --install build
