#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds a platform wheel of the Python package that bundles libhipacm.so.1, hipacm-worker, the
# hipacm CLI and the non-system libraries they link, all found through $ORIGIN RUNPATHs.
#
#   scripts/build-wheel.sh OUTDIR [BUILD_DIR]
#   scripts/build-wheel.sh --stage-only STAGE [BUILD_DIR]   (collect only, into STAGE/src)
#   scripts/build-wheel.sh --pack-only STAGE OUTDIR         (pack a wheel from such a STAGE)
#
# BUILD_DIR (default build/release) is built first when it lacks a binary. hipRTC, comgr and the
# rest of ROCm are not bundled: the plugin loads the user's at run time. glibc, libstdc++ and
# libgcc_s come from the system; the wheel is tagged manylinux_X_Y, X.Y being the highest GLIBC_
# version the bundled files need (setup.py reads them). Each bundled library's Debian copyright
# file goes into the wheel's .dist-info/licenses/third-party/, listed in BUNDLED there. The two
# halves exist for scripts/build-wheel-oldest.sh, which collects inside an old Debian root and
# packs here. Collecting needs patchelf, readelf (binutils), ldd and dpkg; packing needs pip,
# setuptools and wheel.
set -euo pipefail

mode=all
case ${1-} in
  --stage-only | --pack-only)
    mode=${1#--}
    mode=${mode%-only}
    shift
    ;;
esac
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ "$mode" = pack ] && [ $# != 2 ]; }; then
  echo "usage: $0 OUTDIR [BUILD_DIR] | --stage-only STAGE [BUILD_DIR] | --pack-only STAGE OUTDIR" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-/usr/bin/python3}

# Packs STAGE/src (setup.py tags the wheel when libhipacm.so.1 is in the package) into OUTDIR.
pack() {
  "$python" -m pip wheel --quiet --no-build-isolation --no-index --no-deps \
    --disable-pip-version-check --wheel-dir "$2" "$1/src"
  ls "$2"/hipacm-*.whl
}

if [ "$mode" = pack ]; then
  mkdir -p "$2"
  pack "$(cd "$1" && pwd)" "$(cd "$2" && pwd)"
  exit 0
fi
mkdir -p "$1"
if [ "$mode" = stage ]; then
  stage=$(cd "$1" && pwd)
  if [ -e "$stage/src" ]; then
    echo "error: $stage/src exists already" >&2
    exit 1
  fi
else
  outdir=$(cd "$1" && pwd)
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
fi
build=${2:-$repo/build/release}

for tool in patchelf readelf ldd dpkg-query; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: $tool is needed (Debian: patchelf, binutils, libc-bin, dpkg)" >&2
    exit 1
  fi
done

if [ ! -f "$build/libhipacm.so.1" ] || [ ! -x "$build/hipacm-worker" ] || [ ! -x "$build/hipacm" ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$build" -j "$(nproc)" --target hipacm hipacm-worker hipacm-cli
fi

# A copy of the package source, without tests or build leftovers.
mkdir -p "$stage/src"
cp "$repo/bindings/python/pyproject.toml" "$repo/bindings/python/setup.py" \
  "$repo/bindings/python/README.md" "$repo/bindings/python/wheel_support.py" "$repo/LICENSE" \
  "$stage/src/"
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
declare -A origin_of
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
  origin_of[$name]=$path
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

# The licence of each bundled library: its Debian package's copyright file, the authoritative
# account of what that package's binaries are made of, one per source package (Boost's thread
# and chrono share one). BUNDLED maps each library to its file.
third=$stage/src/third-party
mkdir -p "$third"
printf '# soname\tDebian package\tversion\tlicence file (Debian copyright)\n' >"$third/BUNDLED"
for name in "${bundled[@]}"; do
  # dpkg knows the file by the path its package ships, /usr/lib/... or /lib/... (merged /usr).
  real=$(readlink -f "${origin_of[$name]}")
  owner=$(dpkg-query -S "$real" "${real#/usr}" 2>/dev/null | sed -n '1s/:.*//p' || true)
  if [ -z "$owner" ] || [ ! -f "/usr/share/doc/$owner/copyright" ]; then
    echo "error: no Debian package with a copyright file owns the bundled $name" >&2
    exit 1
  fi
  version=$(dpkg-query -W -f '${Version}' "$owner")
  source=$(dpkg-query -W -f '${source:Package}' "$owner")
  cp -L "/usr/share/doc/$owner/copyright" "$third/$source.copyright"
  printf '%s\t%s\t%s\t%s\n' "$name" "$owner" "$version" "$source.copyright" >>"$third/BUNDLED"
done
echo "bundled: libhipacm.so.1 hipacm-worker hipacm ${bundled[*]}"

if [ "$mode" = all ]; then
  pack "$stage" "$outdir"
fi
