# SPDX-License-Identifier: MIT
# bench_smoke_rows.sh - require_rows, sourced by the bench smoke tests: every named row of a
# bench's table compiled all four kernels, or the exit status that says why not.

# require_rows LOG ARCH MISSING ROW... - returns when each ROW of the table in LOG compiled 4 of 4
# kernels. Otherwise names the rows that did not and exits: 77 (skip) where LOG matches the
# extended regex MISSING (the arch's compiler is not on this machine), 1 where it does not.
require_rows() {
  local log=$1 arch=$2 missing=$3 row failed=0
  shift 3
  for row in "$@"; do
    if ! grep -Eq "^$row +.* 4/4 " "$log"; then
      echo "row $row did not compile 4 of 4 kernels"
      failed=1
    fi
  done
  if (( failed )); then
    if grep -Eq "$missing" "$log"; then
      echo "SKIP: the compiler for $arch is not available here"
      exit 77
    fi
    exit 1
  fi
}
