# SPDX-License-Identifier: MIT
# kernel_variants.sh - sourced by the shell benches: distinct copies of the example kernels.
#
# make_kernel_variants DIR COUNT: writes COUNT kernels below DIR, the examples copied as often as
# needed; each copy gets a comment naming its variant and a -DHIPACM_BENCH_VARIANT=<n> option
# directive (the scheme of bench/common/example_kernels.cpp), so no two are the same compile and
# every one has its own cache key. Run from the repository root.
make_kernel_variants() {
  local out=$1 count=$2 made=0 variant dir source
  local examples=(examples/kernels/*.hip)
  for ((variant = 0; made < count; ++variant)); do
    dir="$out/v$variant"
    mkdir -p "$dir"
    cp -r examples/kernels/include "$dir/"
    for source in "${examples[@]}"; do
      ((made < count)) || break
      # The leading // block carries the directives, so the new lines go on top of it.
      { echo "// bench variant $variant"
        echo "// hipacm: option=-DHIPACM_BENCH_VARIANT=$variant"
        cat "$source"; } > "$dir/$(basename "$source")"
      made=$((made + 1))
    done
  done
}
