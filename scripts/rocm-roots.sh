#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes, or reuses from its cache, the Debian sid minbase roots that carry ROCm 6.4 and ROCm 7.2.
#
# Usage: scripts/rocm-roots.sh [NAME...]
#   NAME: rocm-6.4, rocm-7.2 (the default: both), or rocm-6.4-build (rocm-6.4 plus sid's
#   build dependencies, for scripts/rocm-sid-build.sh). Both ROCm roots are copies of sid-test
#   (minbase sid and what the tests run), which is made first and cached like them.
# Roots live in ${HIPACM_ROCM_ROOTS:-/var/cache/hipacm/rocm-roots}/NAME. Each holds
# .hipacm-recipe, the SHA-256 of the recipe it was made from; a root whose stamp is missing or
# differs from the current recipe is made again in a temporary directory and renamed into place
# only once complete, so an interrupted run never leaves a root that looks finished.
# HIPACM_DEBIAN_MIRROR overrides the mirror (default http://deb.debian.org/debian).
#
# Sourced (by rocm-matrix.sh and rocm-sid-build.sh), it only defines the functions below.

ROCM_ROOTS_DIR=${HIPACM_ROCM_ROOTS:-/var/cache/hipacm/rocm-roots}
ROCM_ROOTS_MIRROR=${HIPACM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Bumped whenever the way a recipe is carried out changes, so every cached root is made again.
ROCM_ROOTS_BUILDER=1
# What the release ctest runs besides hipacm's own binaries: ctest itself, pytest for the CLI
# suites, jsonschema for the report schemas' check, nm and readelf for the ABI checks, ps and file
# for scripts.
ROCM_ROOTS_TEST_PACKAGES="cmake python3 python3-pytest python3-jsonschema binutils file procps"
ROCM_ROOTS_BUILD_PACKAGES="g++ make ninja-build pkg-config libboost-thread-dev libboost-chrono-dev
  nettle-dev libsqlite3-dev libhiredis-dev libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev
  googletest"
# The ctest labels the roots leave out (the install test, the fuzz replays, the GPU suite, the
# intercept suite, whose clients are built against this machine's ROCm 5 and NVRTC: the matrix
# runs its own `hipacm run` check in each root instead, and the remote cache's suites, which start
# a redis-server the roots do not carry and whose logic no ROCm version changes, and the tool's own
# suites, whose use of the root's hipRTC the matrix runs as steps of its own: doctor, warmup per
# arch, hipacm run, a cache carried across); read by the scripts that source this one.
# shellcheck disable=SC2034
ROCM_ROOTS_CTEST_EXCLUDE='install|fuzz|device|mpi|intercept|remote|cli'
# The mirror's Release files are past their Valid-Until date; the signatures are still checked.
ROCM_ROOTS_APT_OPTIONS=(-q -o Acquire::Check-Valid-Until=false -o Dpkg::Use-Pty=0)

# The recipe of one root, one step a line: what the stamp hashes and what rocm_root_make runs.
rocm_root_recipe() {
  echo "builder $ROCM_ROOTS_BUILDER"
  echo "mirror $ROCM_ROOTS_MIRROR"
  case $1 in
    sid-test)
      # What both ROCm roots share, made once and copied.
      echo "debootstrap minbase sid"
      echo "install sid $ROCM_ROOTS_TEST_PACKAGES"
      ;;
    rocm-6.4)
      echo "copy sid-test $(rocm_root_recipe sid-test | rocm_roots_sha256)"
      echo "install sid libhiprtc6 libamdhip64-6 libamd-comgr3"
      ;;
    rocm-7.2)
      echo "copy sid-test $(rocm_root_recipe sid-test | rocm_roots_sha256)"
      echo "source experimental"
      echo "install experimental libhiprtc7 libamdhip64-7 libamd-comgr3"
      # Only ROCm 7's hipRTC may be found here, or the matrix would not test what it names.
      echo "absent libhiprtc6"
      ;;
    rocm-6.4-build)
      echo "copy rocm-6.4 $(rocm_root_recipe rocm-6.4 | rocm_roots_sha256)"
      # Unquoted on purpose: the list's line break becomes one space.
      # shellcheck disable=SC2086
      echo "install sid" $ROCM_ROOTS_BUILD_PACKAGES
      ;;
    *)
      echo "rocm-roots: unknown root '$1' (known: sid-test, rocm-6.4, rocm-7.2, rocm-6.4-build)" >&2
      return 2
      ;;
  esac
}

rocm_roots_sha256() { sha256sum | cut -d' ' -f1; }

rocm_roots_require_root() {
  local what=$1
  if [ "$(id -u)" != 0 ]; then
    echo "$what: needs root (debootstrap, chroot and mount namespaces); run it as root or with sudo" >&2
    exit 1
  fi
  local tool
  for tool in debootstrap unshare chroot mount flock; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "$what: '$tool' is not installed (bash .ci/install-deps installs it)" >&2
      exit 1
    fi
  done
}

# rocm_root_exec ROOT [--bind DIR]... [--cd DIR] [VAR=VALUE]... COMMAND [ARG]...
# Runs COMMAND chrooted in ROOT with a clean environment, in a private mount namespace: /proc,
# a private tmpfs /tmp and each DIR bound at its own absolute path. The mounts vanish with the
# namespace, so nothing stays mounted in a cached root, and removing a root never reaches
# through a bind mount into the host.
rocm_root_exec() {
  local root=$1 cd=/
  shift
  local binds=()
  while :; do
    case ${1-} in
      --bind) binds+=("$2"); shift 2 ;;
      --cd) cd=$2; shift 2 ;;
      *) break ;;
    esac
  done
  unshare --mount --propagation private -- /bin/bash -c '
    set -e
    root=$1 count=$2 cd=$3
    shift 3
    mount -t proc proc "$root/proc"
    mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
    for ((i = 0; i < count; i++)); do
      mkdir -p "$root$1"
      mount --bind "$1" "$root$1"
      shift
    done
    exec chroot "$root" /usr/bin/env -i -C "$cd" HOME=/root LC_ALL=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
  ' rocm-root "$root" "${#binds[@]}" "$cd" "${binds[@]}" "$@"
}

# Sets ROCM_TEST_ENV: what scripts/test.sh exports for ctest (with its defaults when a script runs
# alone), and HIPACM_ROCM_MATRIX_COMGR_LIBRARY passed on as HIPACM_COMGR_LIBRARY.
rocm_test_environment() {
  ROCM_TEST_ENV=("HIPACM_ARCH=${HIPACM_ARCH:-gfx90a}" "HIPACM_CACHE=${HIPACM_CACHE:-off}"
    "HIPACM_MACHINE_JOBS=${HIPACM_MACHINE_JOBS:-256}"
    "HIPACM_ISOLATION=${HIPACM_ISOLATION:-service=off}" CTEST_OUTPUT_ON_FAILURE=1)
  local var
  for var in LSAN_OPTIONS ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
    if [ -n "${!var:-}" ]; then ROCM_TEST_ENV+=("$var=${!var}"); fi
  done
  if [ -n "${HIPACM_ROCM_MATRIX_COMGR_LIBRARY:-}" ]; then
    ROCM_TEST_ENV+=("HIPACM_COMGR_LIBRARY=$HIPACM_ROCM_MATRIX_COMGR_LIBRARY")
  fi
}

rocm_root_apt() {
  local root=$1
  shift
  rocm_root_exec "$root" DEBIAN_FRONTEND=noninteractive apt-get "${ROCM_ROOTS_APT_OPTIONS[@]}" "$@"
}

# Installed packages whose name matches a pattern, as "package version" lines.
rocm_root_packages() {
  local root=$1
  shift
  chroot "$root" dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' "$@" 2>/dev/null |
    awk '$1 == "ii" { print $2, $3 }' || true
}

# The ROCm this root carries, for the log: hipRTC, HIP, comgr and the LLVM they use.
rocm_root_versions() {
  rocm_root_packages "$1" 'libhiprtc*' 'libamdhip64*' 'libamd-comgr*' 'libllvm*' | sed 's/^/  /'
}

rocm_root_current() {
  local dir=$ROCM_ROOTS_DIR/$1
  [ -f "$dir/.hipacm-recipe" ] && [ "$(cat "$dir/.hipacm-recipe")" = "$(rocm_root_recipe "$1" | rocm_roots_sha256)" ]
}

# Carries out one recipe step in the root under construction.
rocm_root_step() {
  local dir=$1 step=$2 words
  read -r -a words <<<"$step"
  case ${words[0]} in
    builder | mirror) ;;
    debootstrap)
      mkdir -p "$ROCM_ROOTS_DIR/.debs"
      debootstrap --variant="${words[1]}" --cache-dir="$ROCM_ROOTS_DIR/.debs" "${words[2]}" "$dir" \
        "$ROCM_ROOTS_MIRROR"
      # dpkg's fsyncs only slow down a root that is thrown away whole when anything goes wrong.
      echo force-unsafe-io >"$dir/etc/dpkg/dpkg.cfg.d/hipacm-unsafe-io"
      printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
      chmod 755 "$dir/usr/sbin/policy-rc.d"
      ;;
    copy)
      cp -a "$ROCM_ROOTS_DIR/${words[1]}/." "$dir/"
      rm -f "$dir/.hipacm-recipe"
      ;;
    source)
      echo "deb $ROCM_ROOTS_MIRROR ${words[1]} main" >"$dir/etc/apt/sources.list.d/${words[1]}.list"
      rm -f "$dir/.hipacm-lists-fresh"
      ;;
    install)
      cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
      if [ ! -e "$dir/.hipacm-lists-fresh" ]; then
        rocm_root_apt "$dir" update
        touch "$dir/.hipacm-lists-fresh"
      fi
      local target=()
      if [ "${words[1]}" != sid ]; then target=(-t "${words[1]}"); fi
      rocm_root_apt "$dir" install -y --no-install-recommends "${target[@]}" "${words[@]:2}"
      ;;
    absent)
      if [ -n "$(rocm_root_packages "$dir" "${words[1]}")" ]; then
        echo "rocm-roots: ${words[1]} was installed, and this root must not carry it" >&2
        return 1
      fi
      ;;
    *)
      echo "rocm-roots: unknown recipe step '$step'" >&2
      return 1
      ;;
  esac
}

rocm_root_make() {
  local name=$1 hash tmp step rc start=$SECONDS
  hash=$(rocm_root_recipe "$name" | rocm_roots_sha256)
  tmp=$(mktemp -d "$ROCM_ROOTS_DIR/.$name.new.XXXXXX")
  chmod 755 "$tmp"
  local log=$ROCM_ROOTS_DIR/$name.log
  echo "rocm-roots: making $name (recipe ${hash:0:12}; log $log)"
  : >"$log"
  local steps
  mapfile -t steps < <(rocm_root_recipe "$name")
  for step in "${steps[@]}"; do
    echo "+ $step" >>"$log"
    local step_start=$SECONDS
    # A subshell of its own, outside any condition, so that set -e holds inside the step.
    set +e
    (
      set -e
      rocm_root_step "$tmp" "$step"
    ) </dev/null >>"$log" 2>&1
    rc=$?
    set -e
    echo "+ ($((SECONDS - step_start)) s)" >>"$log"
    if [ "$rc" != 0 ]; then
      echo "rocm-roots: $name: step '$step' failed; the end of $log:" >&2
      tail -n 30 "$log" >&2
      rm -rf --one-file-system "$tmp"
      return 1
    fi
  done
  rocm_root_apt "$tmp" clean >>"$log" 2>&1
  rm -f "$tmp/.hipacm-lists-fresh"
  echo "$hash" >"$tmp/.hipacm-recipe"
  if [ -e "$ROCM_ROOTS_DIR/$name" ]; then
    mv "$ROCM_ROOTS_DIR/$name" "$ROCM_ROOTS_DIR/.$name.old.$$"
  fi
  mv "$tmp" "$ROCM_ROOTS_DIR/$name"
  rm -rf --one-file-system "$ROCM_ROOTS_DIR/.$name.old.$$"
  echo "rocm-roots: $name made in $((SECONDS - start)) s"
}

rocm_root_make_if_needed() {
  local parent
  parent=$(rocm_root_recipe "$1" | awk '$1 == "copy" { print $2 }')
  if [ -n "$parent" ]; then rocm_root_make_if_needed "$parent"; fi
  if rocm_root_current "$1"; then
    echo "rocm-roots: $1 is cached (recipe $(cut -c1-12 "$ROCM_ROOTS_DIR/$1/.hipacm-recipe"))"
  else
    rocm_root_make "$1"
  fi
}

rocm_roots_main() {
  set -euo pipefail
  rocm_roots_require_root rocm-roots.sh
  local names=("$@") name stale
  if [ ${#names[@]} = 0 ]; then names=(rocm-6.4 rocm-7.2); fi
  for name in "${names[@]}"; do rocm_root_recipe "$name" >/dev/null; done
  mkdir -p "$ROCM_ROOTS_DIR"
  # One maker at a time; users of the roots (rocm-matrix.sh) hold the lock shared.
  exec 9>"$ROCM_ROOTS_DIR/.lock"
  flock -x 9
  # Left by an interrupted run: never complete, never in use while the lock is held.
  for stale in "$ROCM_ROOTS_DIR"/.*.new.* "$ROCM_ROOTS_DIR"/.*.old.*; do
    if [ -d "$stale" ]; then rm -rf --one-file-system "$stale"; fi
  done
  for name in "${names[@]}"; do rocm_root_make_if_needed "$name"; done
  for name in "${names[@]}"; do
    echo "rocm-roots: $name carries:"
    rocm_root_versions "$ROCM_ROOTS_DIR/$name"
  done
  exec 9>&-
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  rocm_roots_main "$@"
fi
