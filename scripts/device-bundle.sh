#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# device-bundle.sh - builds the NVIDIA device suite (Release) and packs it, with the shared
# libraries a bare CUDA image may lack, into .device-bundle/ for tests/device/run.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD_DIR=${HIPACM_DEVICE_BUILD_DIR:-build/device}
BUNDLE=$ROOT/.device-bundle
JOBS=${HIPACM_DEVICE_JOBS:-2}
TARGETS=(hipacm hipacm-worker hipacm-device-check hipacm-nvidia-bench)

die() { echo "device-bundle: $*" >&2; exit 1; }

echo "== configure $BUILD_DIR (Release)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f $BUILD_DIR/CMakeCache.txt ]]; then
  cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DHIPACM_BUILD_TESTS=ON || die "cmake configure failed"
else
  cmake "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null || die "cmake re-configure failed"
fi
echo "== build ${TARGETS[*]}"
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}" || die "build failed"

echo "== pack $BUNDLE"
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/deps"
# libhipacm looks for hipacm-worker beside itself: keep them in one directory.
cp -L "$BUILD_DIR/libhipacm.so.1" "$BUNDLE/libhipacm.so.1" || die "no libhipacm.so.1"
for exe in hipacm-worker hipacm-device-check hipacm-nvidia-bench; do
  cp "$BUILD_DIR/$exe" "$BUNDLE/$exe" || die "no $exe in $BUILD_DIR"
done
strip --strip-unneeded "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-* 2>/dev/null || true

# Every shared library the binaries need except the C/C++ runtime (the image has its own, and
# a copy here would shadow the one Python and torch use) and the driver (libcuda comes from it).
is_system_runtime() {
  case "$1" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libstdc++.so.*|\
    libgcc_s.so.*|libcuda.so.*|libnvrtc*|linux-vdso*|libhipacm.so.*) return 0 ;;
  esac
  return 1
}
for bin in "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-*; do
  LD_LIBRARY_PATH=$BUNDLE ldd "$bin" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
    is_system_runtime "$soname" && continue
    [[ -f $path ]] || die "$bin needs $soname, which ldd cannot find here"
    [[ -f $BUNDLE/deps/$soname ]] || cp -L "$path" "$BUNDLE/deps/$soname"
  done || exit 1
done

glibc=$(objdump -T "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-* "$BUNDLE"/deps/* 2>/dev/null |
  grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1)
glibcxx=$(objdump -T "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-* 2>/dev/null |
  grep -o 'GLIBCXX_3\.4\.[0-9]*' | sort -uV | tail -1)
{
  echo "built: $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(c++ --version | head -1)"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- hip_backend plugin include || echo ' (+ uncommitted changes)')"
  echo "needs: $glibc, $glibcxx"
  echo "deps: $(cd "$BUNDLE/deps" && ls | tr '\n' ' ')"
} > "$BUNDLE/BUILD-INFO.txt"
cat "$BUNDLE/BUILD-INFO.txt"
du -sh "$BUNDLE"
size_kib=$(du -sk "$BUNDLE" | cut -f1)
(( size_kib < 48 * 1024 )) || echo "device-bundle: WARNING: the bundle is ${size_kib} KiB; the carry limit is 64 MiB for the whole tree" >&2
echo "device-bundle: ready. On the GPU machine: bash tests/device/run.sh (carry: .device-bundle)"
