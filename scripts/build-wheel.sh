#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds a platform wheel of the Python package that bundles libhipacm.so.1, hipacm-worker, the
# hipacm CLI and the non-system libraries they link, all found through $ORIGIN RUNPATHs.
#
#   scripts/build-wheel.sh OUTDIR [BUILD_DIR]
#
# BUILD_DIR (default build/release) is built first when it lacks a binary. hipRTC, comgr and the
# rest of ROCm are not bundled: the plugin loads the user's at run time. glibc, libstdc++ and
# libgcc_s come from the system, so the wheel runs where this build's glibc and GCC runtime (or
# newer) are installed. Needs patchelf, readelf (binutils), and pip, setuptools and wheel.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUTDIR [BUILD_DIR]" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
build=${2:-$repo/build/release}
python=${PYTHON:-/usr/bin/python3}

for tool in patchelf readelf ldd; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool is needed (Debian: patchelf, binutils, libc-bin)" >&2
    exit 1
  fi
done

if [ ! -f "$build/libhipacm.so.1" ] || [ ! -x "$build/hipacm-worker" ] || [ ! -x "$build/hipacm" ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$build" -j "$(nproc)" --target hipacm hipacm-worker hipacm-cli
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# A copy of the package source, without tests or build leftovers.
mkdir -p "$stage/src"
cp "$repo/bindings/python/pyproject.toml" "$repo/bindings/python/setup.py" \
  "$repo/bindings/python/README.md" "$stage/src/"
mkdir -p "$stage/src/hipacm"
cp "$repo"/bindings/python/hipacm/*.py "$repo/bindings/python/hipacm/py.typed" "$stage/src/hipacm/"
pkg=$stage/src/hipacm
libs=$pkg/.libs
mkdir -p "$libs"

# The binaries, dereferenced (libhipacm.so.1 is a symlink in the build tree), without debug info.
cp -L "$build/libhipacm.so.1" "$pkg/libhipacm.so.1"
cp -L "$build/hipacm-worker" "$pkg/hipacm-worker"
cp -L "$build/hipacm" "$pkg/hipacm"
chmod 0755 "$pkg/hipacm-worker" "$pkg/hipacm"
chmod 0644 "$pkg/libhipacm.so.1"
strip --strip-debug "$pkg/libhipacm.so.1" "$pkg/hipacm-worker" "$pkg/hipacm"

# What the system provides everywhere: the C library, the GCC runtime, the loader.
is_system_library() {
  case "$1" in
    linux-vdso.so.* | ld-linux*.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | \
      librt.so.* | libutil.so.* | libresolv.so.* | libstdc++.so.* | libgcc_s.so.*) return 0 ;;
  esac
  return 1
}

# Every library that ldd resolves for the binaries, transitively, except the system's and
# libhipacm itself (bundled above). ldd already lists indirect dependencies.
bundled=()
while read -r name path; do
  if is_system_library "$name" || [ "$name" = libhipacm.so.1 ]; then continue; fi
  case "$path" in
    /*) ;;
    *)
      echo "error: ldd cannot resolve $name for the bundled binaries" >&2
      exit 1
      ;;
  esac
  cp -L "$path" "$libs/$name"
  chmod 0644 "$libs/$name"
  strip --strip-debug "$libs/$name"
  bundled+=("$name")
done < <(ldd "$build/libhipacm.so.1" "$build/hipacm-worker" "$build/hipacm" |
  awk '$2 == "=>" { print $1, $3 }' | sort -u)

# RUNPATHs: each object finds its own NEEDED libraries (RUNPATH is not inherited).
# $ORIGIN is for the dynamic loader, not the shell.
# shellcheck disable=SC2016
origin='$ORIGIN'
patchelf --set-rpath "$origin/.libs" "$pkg/libhipacm.so.1"
patchelf --set-rpath "$origin/.libs" "$pkg/hipacm-worker"
patchelf --set-rpath "$origin:$origin/.libs" "$pkg/hipacm"
for name in "${bundled[@]}"; do
  patchelf --set-rpath "$origin" "$libs/$name"
done

# Check: every NEEDED entry is bundled or a system library.
for elf in "$pkg/libhipacm.so.1" "$pkg/hipacm-worker" "$pkg/hipacm" "$libs"/*; do
  while read -r needed; do
    if is_system_library "$needed" || [ -f "$libs/$needed" ] || [ "$needed" = libhipacm.so.1 ]; then
      continue
    fi
    echo "error: $(basename "$elf") needs $needed, which is neither bundled nor a system library" >&2
    exit 1
  done < <(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done

# setup.py tags the wheel for this platform when libhipacm.so.1 is in the package.
"$python" -m pip wheel --quiet --no-build-isolation --no-index --no-deps \
  --disable-pip-version-check --wheel-dir "$outdir" "$stage/src"
echo "bundled: libhipacm.so.1 hipacm-worker hipacm ${bundled[*]}"
ls "$outdir"/hipacm-*.whl
