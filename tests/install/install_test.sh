#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build into a temporary prefix, builds a find_package(hipacm) consumer, and runs it.
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
test -x "$prefix/libexec/hipacm/hipacm-worker" || { echo "worker not installed"; exit 1; }
for header in hipacm.h hipacm.hpp cpp/error.hpp cpp/callbacks.hpp cpp/future.hpp cpp/config.hpp \
  cpp/request.hpp cpp/mode.hpp cpp/compile.hpp; do
  test -f "$prefix/include/hipacm/$header" || { echo "header $header not installed"; exit 1; }
done
cmake -S "$source_dir/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer-build" >/dev/null
# The installed library finds its installed worker with no HIPACM_WORKER set.
env -u HIPACM_WORKER LD_LIBRARY_PATH="$prefix/lib" HIPACM_ISOLATION=process,service=off \
  "$prefix/consumer-build/consumer"
# The installed tool runs from bin/ (RPATH to lib/) and reports the installed worker.
"$prefix/bin/hipacm" --version >/dev/null
doctor=$(env -u HIPACM_WORKER "$prefix/bin/hipacm" doctor --json || true)
grep -q 'libexec/hipacm/hipacm-worker' <<<"$doctor" ||
  { echo "installed hipacm does not find the installed worker: $doctor"; exit 1; }
