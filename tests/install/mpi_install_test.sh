#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An installed tree (cmake --install into a DESTDIR) runs `hipacm warmup --mpi` under mpirun: the
# installed tool finds hipacm-mpi in LIBEXECDIR/hipacm/, relative to its own directory, and
# hipacm-mpi finds the installed library through its run path.
#   mpi_install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1 source_dir=$2
fail() { echo "mpi_install_test: $*" >&2; exit 1; }
if ! command -v mpirun >/dev/null || [[ ! -x $build_dir/hipacm-mpi ]]; then
  echo "no mpirun or no hipacm-mpi in this build"
  exit 0
fi
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
destdir=$(mktemp -d)
trap 'rm -rf "$destdir"' EXIT
DESTDIR=$destdir cmake --install "$build_dir" >/dev/null
root=$destdir$(cache CMAKE_INSTALL_PREFIX)
libexec=$(cache CMAKE_INSTALL_LIBEXECDIR)
[[ $libexec == /* ]] && libexec=$destdir$libexec || libexec=$root/$libexec
[[ -x $libexec/hipacm/hipacm-mpi ]] || fail "hipacm-mpi is not installed in LIBEXECDIR/hipacm/"
[[ ! -e $root/bin/hipacm-mpi ]] || fail "hipacm-mpi is installed in bin/ too"

kernels=$destdir/kernels
mkdir "$kernels"
cp "$source_dir/examples/kernels/activations.hip" "$source_dir/examples/kernels/conv2d_3x3.hip" "$kernels/"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The installed tree's own worker and library: nothing of the build tree's. The ranks share
# kernels through their caches, so the test runner's HIPACM_CACHE=off is dropped.
unset HIPACM_WORKER LD_LIBRARY_PATH HIPACM_CACHE
report=$destdir/report.json
mpirun --allow-run-as-root --oversubscribe -np 2 "$root/bin/hipacm" warmup --mpi "$kernels" \
  --arch gfx90a --jobs 1 --cache-dir "$destdir/cache-%r" --json "$report" -q ||
  fail "hipacm warmup --mpi failed from the installed tree"
/usr/bin/python3 - "$report" <<'PY' || fail "the report is not that of a 2-rank run of 2 kernels"
import json, sys
data = json.load(open(sys.argv[1]))
assert data["totals"]["kernels"] == 2 and data["totals"]["failed"] == 0, data["totals"]
assert [row["rank"] for row in data["mpi"]["per_rank"]] == [0, 1], data["mpi"]
PY
echo "mpi_install_test: ok"
