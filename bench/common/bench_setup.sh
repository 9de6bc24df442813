# SPDX-License-Identifier: MIT
# bench_setup.sh - sourced first by the shell benches that run `hipacm warmup`, from the repository
# root: the compile service left off unless the caller chose, make_kernel_variants, and
# make_work_kernels.

# Workers are spawned by each process, as in every figure recorded before the compile service
# became the default; HIPACM_ISOLATION=service=auto measures the default instead. The service part
# joins the isolation word already there (process -> process,service=off); a service= part or the
# deprecated HIPACM_COMPILE_SERVICE the caller set is left as it is.
if [[ -z ${HIPACM_COMPILE_SERVICE:-} && ${HIPACM_ISOLATION:-} != *service=* ]]; then
  export HIPACM_ISOLATION=${HIPACM_ISOLATION:+$HIPACM_ISOLATION,}service=off
fi
source bench/common/kernel_variants.sh

# make_work_kernels COUNT: sets `work` to a new temporary directory, removed when the bench exits,
# and writes COUNT distinct kernels below $work/kernels.
make_work_kernels() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  make_kernel_variants "$work/kernels" "$1"
}
