# SPDX-License-Identifier: MIT
# warmup_cli.sh - sourced (after bench_setup.sh) by the benches that time `hipacm warmup` as a
# whole process: the tool of a build directory, and one quiet warmup run of the work kernels.

# use_cli_build DIR: sets `hipacm` to the tool built in DIR; stops the bench (exit 2) without it.
use_cli_build() {
  hipacm="$1/hipacm"
  [[ -x $hipacm ]] || { echo "no $hipacm: build the hipacm-cli target first" >&2; exit 2; }
}

# warm_into CACHE_DIR REPORT: one `hipacm warmup` of $work/kernels (make_work_kernels) for $arch
# with --jobs $jobs into CACHE_DIR, quiet, its JSON report written to REPORT.
warm_into() {
  HIPACM_CACHE_DIR=$1 "$hipacm" warmup "$work/kernels" --arch "$arch" --jobs "$jobs" --quiet \
    --json "$2" >/dev/null
}
