#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the platform wheel against Debian 11 (bullseye: glibc 2.31, GCC 10), the oldest Debian
# release deb.debian.org still serves, so that it loads on older systems than the build machine.
#
# Usage: scripts/build-wheel-oldest.sh OUTDIR [BUILD_DIR]   (as root; heavy: run it on demand)
#
# The root is a minbase bullseye with bullseye's g++, CMake, Ninja, Boost, Nettle, SQLite, fmt,
# patchelf and python3 (and bookworm's header-only CLI11 and nlohmann-json: see the recipe), made
# and cached like the ROCm roots (scripts/rocm-roots.sh) under ${HIPACM_WHEEL_ROOTS:-/var/cache/hipacm/wheel-roots}. In it the
# script builds the plugin, the worker and the CLI in BUILD_DIR (default build/wheel-bullseye),
# collects them with the libraries they link and those libraries' Debian copyright files
# (scripts/build-wheel.sh --stage-only), and checks that the staged CLI runs there. bullseye's
# setuptools (52) cannot read pyproject.toml's [project] table, so the wheel is packed from that
# stage by this machine's pip (build-wheel.sh --pack-only); its manylinux tag is read from the
# staged ELF files, not from the machine that packs it.
#
# bullseye's CMake is 3.18 and the project asks for 3.20 (bullseye-backports is gone from the
# mirror). The only 3.19+ commands are in the man-page generation and the examples' manifest
# check, both off here, so BUILD_DIR/src is a copy of the tree whose top-level
# cmake_minimum_required says 3.18: the checkout itself is not changed. What else GCC 10 and
# bullseye's libraries lack is force-included from BUILD_DIR/gcc10-compat.h (see below).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=rocm-roots.sh
. "$here/rocm-roots.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [BUILD_DIR]" >&2
  exit 2
fi
rocm_roots_require_root build-wheel-oldest.sh
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
build=$(realpath -m "${2:-$repo/build/wheel-bullseye}")
ROCM_ROOTS_DIR=${HIPACM_WHEEL_ROOTS:-/var/cache/hipacm/wheel-roots}
WHEEL_ROOT=bullseye-wheel
WHEEL_ROOT_PACKAGES="g++ make cmake ninja-build pkg-config libboost-thread-dev libboost-chrono-dev
  libhiredis-dev nettle-dev libsqlite3-dev libfmt-dev patchelf binutils file python3"

# rocm-roots.sh's machinery, with this script's one recipe.
rocm_root_recipe() {
  echo "builder $ROCM_ROOTS_BUILDER"
  echo "mirror $ROCM_ROOTS_MIRROR"
  case $1 in
    "$WHEEL_ROOT")
      echo "debootstrap minbase bullseye"
      # Unquoted on purpose: the list's line breaks become spaces.
      # shellcheck disable=SC2086
      echo "install bullseye" $WHEEL_ROOT_PACKAGES
      # CLI11 is not in bullseye, and the CLI's ordered_json code needs a newer nlohmann-json
      # than bullseye's 3.9.1. Both are header-only (Architecture: all, no dependencies), so
      # bookworm's packages change nothing the binaries need at run time; they alone come from
      # bookworm, after everything else is installed.
      echo "source bookworm"
      echo "install bookworm libcli11-dev nlohmann-json3-dev"
      ;;
    *)
      echo "build-wheel-oldest: unknown root '$1'" >&2
      return 2
      ;;
  esac
}

start=$SECONDS
mkdir -p "$ROCM_ROOTS_DIR"
exec 9>"$ROCM_ROOTS_DIR/.lock"
flock -x 9
for stale in "$ROCM_ROOTS_DIR"/.*.new.* "$ROCM_ROOTS_DIR"/.*.old.*; do
  if [ -d "$stale" ]; then rm -rf --one-file-system "$stale"; fi
done
rocm_root_make_if_needed "$WHEEL_ROOT"
flock -s 9
root=$ROCM_ROOTS_DIR/$WHEEL_ROOT
glibc=$(rocm_root_packages "$root" libc6 | awk '{ print $2 }')
case $glibc in
  2.31-*) ;;
  *)
    echo "build-wheel-oldest: the root's libc6 is '$glibc', not bullseye's 2.31" >&2
    exit 1
    ;;
esac
echo "build-wheel-oldest: root ready in $((SECONDS - start)) s; it carries:"
rocm_root_packages "$root" libc6 g++-10 cmake libboost-thread1.74.0 libnettle8 libsqlite3-0 \
  'libfmt7' python3 | sed 's/^/  /'

# The tree as it is now (tracked and untracked files git does not ignore), minimum lowered.
src=$build/src
rm -rf --one-file-system "$src"
mkdir -p "$src"
# A file deleted but not yet committed is listed and missing: tar warns and goes on.
git -C "$repo" ls-files -z --cached --others --exclude-standard |
  tar -C "$repo" --null -T - --ignore-failed-read -cf - | tar -C "$src" -xf -
if [ ! -f "$src/CMakeLists.txt" ]; then
  echo "build-wheel-oldest: copying the tree into $src failed" >&2
  exit 1
fi
sed -i 's/^cmake_minimum_required(VERSION 3\.20)$/cmake_minimum_required(VERSION 3.18)/' \
  "$src/CMakeLists.txt"
if ! grep -qx 'cmake_minimum_required(VERSION 3.18)' "$src/CMakeLists.txt"; then
  echo "build-wheel-oldest: the top-level cmake_minimum_required is not 3.20 any more; update this script" >&2
  exit 1
fi

# What the tree needs and bullseye lacks, seen first by every C++ translation unit of this build
# only: std::bit_cast and floating-point std::from_chars (libstdc++ 11), sqlite3_changes64 (SQLite 3.37; bullseye has 3.34, where
# sqlite3_changes counts the same rows), and <mutex>, which plugin/abi/intercept_entry.cpp uses
# without including it (GCC 12's headers happen to bring it in).
compat=$build/gcc10-compat.h
cat >"$compat" <<'COMPAT'
// Forced into the bullseye wheel build only (scripts/build-wheel-oldest.sh says why).
#include <mutex>
#include <version>
#include <sqlite3.h>
#if SQLITE_VERSION_NUMBER < 3037000
#define sqlite3_changes64(db) static_cast<sqlite3_int64>(sqlite3_changes(db))
#endif
#if !defined(__cpp_lib_bit_cast)
#include <cstring>
#include <type_traits>
namespace std {
template <class To, class From>
To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> &&
                is_trivially_copyable_v<From>);
  To to;
  memcpy(&to, &from, sizeof to);
  return to;
}
}  // namespace std
#endif
#if defined(_GLIBCXX_RELEASE) && _GLIBCXX_RELEASE < 11
#include <charconv>
#include <cmath>
#include <locale>
#include <sstream>
#include <string>
#include <system_error>
namespace std {
// Floating-point from_chars came with libstdc++ 11. The tree asks only for chars_format::fixed:
// [-]digits[.digits], no exponent, infinity, NaN or hex; read here with the classic locale.
inline from_chars_result from_chars(const char* first, const char* last, double& value,
                                    chars_format format) {
  if (format != chars_format::fixed) return {first, errc::invalid_argument};
  const char* p = first;
  if (p != last && *p == '-') ++p;
  const char* digits = p;
  while (p != last && *p >= '0' && *p <= '9') ++p;
  bool any = p != digits;
  if (p != last && *p == '.') {
    const char* fraction = ++p;
    while (p != last && *p >= '0' && *p <= '9') ++p;
    any = any || p != fraction;
  }
  if (!any) return {first, errc::invalid_argument};
  istringstream in(string(first, p));
  in.imbue(locale::classic());
  double parsed = 0;
  in >> parsed;
  if (!in || parsed == HUGE_VAL || parsed == -HUGE_VAL) return {p, errc::result_out_of_range};
  value = parsed;
  return {p, errc()};
}
}  // namespace std
#endif
COMPAT

in_root() { rocm_root_exec "$root" --bind "$build" "$@"; }
obj=$build/obj
stage=$build/stage
configured=$SECONDS
in_root cmake -S "$src" -B "$obj" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPACM_BUILD_TESTS=OFF \
  -DHIPACM_BUILD_BENCH=OFF -DHIPACM_BUILD_EXAMPLES=OFF -DHIPACM_BUILD_MANPAGES=OFF \
  -DHIPACM_WITH_MPI=OFF "-DCMAKE_CXX_FLAGS=-include $compat"
# -k 0: one run names every file that GCC 10 or bullseye's libraries cannot build.
in_root cmake --build "$obj" -j "$(nproc)" --target hipacm hipacm-worker hipacm-cli -- -k 0
echo "build-wheel-oldest: built in $((SECONDS - configured)) s with $(in_root g++ --version | sed -n 1p)"

rm -rf --one-file-system "$stage"
in_root bash "$src/scripts/build-wheel.sh" --stage-only "$stage" "$obj"
# The staged CLI runs on bullseye's glibc and libstdc++ with only its bundled libraries.
in_root "$stage/src/hipacm/hipacm" --version

bash "$repo/scripts/build-wheel.sh" --pack-only "$stage" "$outdir"
echo "build-wheel-oldest: done in $((SECONDS - start)) s"
