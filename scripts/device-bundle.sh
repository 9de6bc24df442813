#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# device-bundle.sh - builds the device suite (Release) and packs it, with the shared libraries a
# bare CUDA image may lack and this machine's ROCm hipRTC runtime (xz-compressed), into
# .device-bundle/ for tests/device/run.sh.
#
# Environment: HIPACM_DEVICE_BUILD_DIR (build/device), HIPACM_DEVICE_JOBS (2, also the number of
# parallel xz runs), HIPACM_DEVICE_ROCM=0 for an NVIDIA-only bundle (no hipRTC rows on the
# device), HIPACM_DEVICE_HIPRTC (the hipRTC library to pack; default: the linker's
# libamdhip64.so.5), HIPACM_DEVICE_ROCM_STUBS (libraries replaced by stubs, see below).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
BUILD_DIR=${HIPACM_DEVICE_BUILD_DIR:-build/device}
BUNDLE=$ROOT/.device-bundle
JOBS=${HIPACM_DEVICE_JOBS:-2}
TARGETS=(hipacm hipacm-worker hipacm-device-check hipacm-nvidia-bench hipacm_intercept)
# The intercept tests' ordinary clients (no hipacm code), for the run stage's `hipacm run` rows.
CLIENTS=(hipacm_intercept_dlopen_client hipacm_intercept_nvrtc_linked_client
         hipacm_intercept_nvrtc_dlopen_client)
OPTIONAL_TARGETS=(hipacm-mpi)  # built where MPI is (HIPACM_WITH_MPI): the mpi stage's helper

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
# Read once and searched with here-strings: under pipefail, "cmake ... | grep -q" fails whenever
# grep leaves before cmake has written everything.
known_targets=$(cmake --build "$BUILD_DIR" --target help)
for target in "${OPTIONAL_TARGETS[@]}" "${CLIENTS[@]}"; do
  if grep -q "^$target:" <<<"$known_targets"; then TARGETS+=("$target"); fi
done
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}" || die "build failed"

echo "== pack $BUNDLE"
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/deps"
# libhipacm looks for hipacm-worker beside itself: keep them in one directory.
cp -L "$BUILD_DIR/libhipacm.so.1" "$BUNDLE/libhipacm.so.1" || die "no libhipacm.so.1"
for exe in hipacm hipacm-worker hipacm-device-check hipacm-nvidia-bench; do
  cp "$BUILD_DIR/$exe" "$BUNDLE/$exe" || die "no $exe in $BUILD_DIR"
done
if [[ -x $BUILD_DIR/hipacm-mpi ]]; then cp "$BUILD_DIR/hipacm-mpi" "$BUNDLE/hipacm-mpi"; fi
# `hipacm run` finds its shim beside libhipacm.so.1.
cp "$BUILD_DIR/libhipacm_intercept.so" "$BUNDLE/" || die "no libhipacm_intercept.so in $BUILD_DIR"
mkdir -p "$BUNDLE/clients"
for client in "${CLIENTS[@]}"; do
  if [[ -x $BUILD_DIR/tests/intercept/$client ]]; then cp "$BUILD_DIR/tests/intercept/$client" "$BUNDLE/clients/"; fi
done
strip --strip-unneeded "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/libhipacm_intercept.so "$BUNDLE"/hipacm-* \
  "$BUNDLE"/clients/* 2>/dev/null || true

# Every shared library the binaries need except the C/C++ runtime (the image has its own, and
# a copy here would shadow the one Python and torch use) and the driver (libcuda comes from it).
is_system_runtime() {
  case "$1" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libstdc++.so.*|\
    libgcc_s.so.*|libcuda.so.*|libnvrtc*|linux-vdso*|libhipacm.so.*) return 0 ;;
  esac
  return 1
}
for bin in "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-* "$BUNDLE"/clients/*; do
  LD_LIBRARY_PATH=$BUNDLE ldd "$bin" | awk '/=>/ {print $1, $3}' | while read -r soname path; do
    is_system_runtime "$soname" && continue
    [[ -f $path ]] || die "$bin needs $soname, which ldd cannot find here"
    [[ -f $BUNDLE/deps/$soname ]] || cp -L "$path" "$BUNDLE/deps/$soname"
  done || exit 1
done

# -- ROCm's hipRTC runtime, for the AMD (gfx90a) rows: hipRTC compiles without a GPU, so the
#    device's CPU cores run it. Packed are hipRTC (ROCm 5 keeps it inside libamdhip64), the comgr
#    it dlopens, and every library either needs except the C/C++ runtime, each xz-compressed
#    under its real file name (the name carries the ROCm release that hipacm reads). comgr 5.2.3
#    embeds its device libraries, headers and linker: a compile opens no other file (checked with
#    strace). Compressed copies are kept in $BUILD_DIR/rocm-xz and reused while the library file
#    is unchanged, since xz -9 of libLLVM takes minutes on two cores.
#
#    Stubs: LLVM links libz3 (the static analyzer's solver) and, through libxml2 and libicuuc,
#    libicudata (Unicode tables); compiling a kernel calls neither. Packed whole they would add
#    about 14 MiB compressed to a carry limit of 64 MiB, so by default each is replaced by a
#    generated library of the same soname that defines every symbol the packed libraries take
#    from it (functions print their name and abort; data is zero). HIPACM_DEVICE_ROCM_STUBS=""
#    packs the real ones.
ROCM_SET=${HIPACM_DEVICE_ROCM:-1}
ROCM_STUBS=${HIPACM_DEVICE_ROCM_STUBS-libz3.so.4 libicudata.so.72}
ROCM_OUT=$BUNDLE/rocm
ROCM_CACHE=$BUILD_DIR/rocm-xz

is_c_runtime() {
  case "$1" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*|libstdc++.so.*|\
    libgcc_s.so.*|linux-vdso*) return 0 ;;
  esac
  return 1
}

# xz_cached ORIGINAL FILE OUT TAG: OUT = xz -9 of FILE (ORIGINAL, or ORIGINAL changed as TAG
# says), from the cache while ORIGINAL's size and mtime are unchanged.
xz_cached() {
  local original=$1 file=$2 out=$3 tag=$4 key tmp
  if [[ $tag == .stub ]]; then  # made afresh on every run: nothing to reuse
    xz -T1 -9 -c "$file" > "$out"
    return
  fi
  key=$(basename "$original").$(stat -Lc '%s-%Y' "$original")$tag.x86.xz
  tmp=$ROCM_CACHE/$key.tmp.$BASHPID
  if [[ ! -f $ROCM_CACHE/$key ]]; then
    if ! xz -T1 --x86 --lzma2=preset=9 -c "$file" > "$tmp"; then
      rm -f "$tmp"
      return 1
    fi
    mv "$tmp" "$ROCM_CACHE/$key"
  fi
  cp "$ROCM_CACHE/$key" "$out"
}

# make_stub SONAME REAL_FILE OUT_DIR: a library named SONAME defining every dynamic symbol that the
# packed libraries import from REAL_FILE. Prints the stub's path.
make_stub() {
  local soname=$1 real=$2 dir=$3 src=$3/stub-$1.c
  local wanted
  wanted=$(for lib in "$ROCM_OUT"/.raw/*; do objdump -T "$lib" | awk '$3 == "*UND*" {print $NF}'; done | sort -u)
  {
    echo "/* generated by scripts/device-bundle.sh: stand-in for $soname, whose code hipRTC never runs */"
    echo '#include <stdio.h>'
    echo '#include <stdlib.h>'
    printf 'static void called(const char* name) {\n'
    printf '  fprintf(stderr, "device bundle: %%s from the %s stub was called\\n", name);\n' "$soname"
    printf '  abort();\n}\n'
    objdump -T "$real" | awk '$2 == "g" && $4 != "*UND*" {print $3, $NF}' | sort -u -k2 |
      while read -r kind name; do
        grep -qxF "$name" <<<"$wanted" || continue
        case $kind in
          DF) echo "void $name(void) { called(\"$name\"); }" ;;
          DO) echo "unsigned char ${name}[64];" ;;
        esac
      done
  } > "$src"
  cc -shared -fPIC -O1 -Wl,-soname,"$soname" -o "$dir/$soname" "$src" || return 1
  echo "$dir/$soname"
}

# requires_executable_stack FILE: its PT_GNU_STACK asks for an executable stack.
requires_executable_stack() {
  readelf -lW "$1" | awk '$1 == "GNU_STACK" && $7 ~ /E/ {found = 1} END {exit !found}'
}

# clear_executable_stack FILE: drops PF_X from FILE's PT_GNU_STACK (what execstack -c does).
clear_executable_stack() {
  python3 - "$1" <<'PY'
import struct, sys
path = sys.argv[1]
elf = bytearray(open(path, "rb").read())
assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not a little-endian ELF64 file"
phoff = struct.unpack_from("<Q", elf, 0x20)[0]
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
for i in range(phnum):
    at = phoff + i * phentsize
    if struct.unpack_from("<I", elf, at)[0] == 0x6474E551:  # PT_GNU_STACK
        flags = struct.unpack_from("<I", elf, at + 4)[0]
        struct.pack_into("<I", elf, at + 4, flags & ~1)  # PF_X
open(path, "wb").write(elf)
PY
}

pack_rocm() {
  command -v xz >/dev/null || die "xz is needed to pack the ROCm runtime (apt-get install xz-utils)"
  local hiprtc=${HIPACM_DEVICE_HIPRTC:-}
  if [[ -z $hiprtc ]]; then
    hiprtc=$(ldconfig -p | awk '$1 == "libamdhip64.so.5" && !found {print $NF; found = 1}')
  fi
  [[ -n $hiprtc && -f $hiprtc ]] || die "no hipRTC (libamdhip64.so.5) here; install libamdhip64-5 and libamd-comgr2, or set HIPACM_DEVICE_ROCM=0"
  # The comgr beside hipRTC, else the linker's (what hipRTC's dlopen by soname finds here).
  local comgr
  comgr=$(dirname "$hiprtc")/libamd_comgr.so.2
  [[ -f $comgr ]] || comgr=$(ldconfig -p | awk '$1 == "libamd_comgr.so.2" && !found {print $NF; found = 1}')
  [[ -n $comgr && -f $comgr ]] || die "no comgr (libamd_comgr.so.2) here; install libamd-comgr2"
  mkdir -p "$ROCM_OUT/.raw" "$ROCM_CACHE"
  # soname, then the file it resolves to, for hipRTC, comgr and everything either loads.
  local list=$ROCM_OUT/.raw/list
  {
    echo "$(basename "$hiprtc") $hiprtc"
    echo "libamd_comgr.so.2 $comgr"
    ldd "$hiprtc" "$comgr" | awk '/=>/ && $3 ~ /^\// {print $1, $3}'
  } | sort -u -k1,1 > "$list"
  while read -r soname path; do
    is_c_runtime "$soname" && continue
    ln -sf "$(readlink -f "$path")" "$ROCM_OUT/.raw/$soname"
  done < "$list"
  rm -f "$list"
  : > "$ROCM_OUT/MANIFEST"
  local soname real file pids=() stub_dir=$ROCM_OUT/.stubs
  mkdir -p "$stub_dir"
  for soname in $ROCM_STUBS; do
    [[ -e $ROCM_OUT/.raw/$soname ]] || continue
    file=$(make_stub "$soname" "$ROCM_OUT/.raw/$soname" "$stub_dir") || die "cannot build the $soname stub"
    ln -sf "$file" "$ROCM_OUT/.raw/$soname"
  done
  local original tag note
  for link in "$ROCM_OUT"/.raw/*; do
    soname=$(basename "$link")
    original=$(readlink -f "$link")
    file=$original
    real=$(basename "$file")
    tag='' note=''
    [[ $file == "$stub_dir"/* ]] && real=$soname tag=.stub note=", stub"
    if requires_executable_stack "$file"; then
      # glibc 2.41 and later refuse to dlopen such a library; nothing in a compile needs it.
      file=$stub_dir/$real
      cp "$original" "$file" && clear_executable_stack "$file" || die "cannot patch $real"
      requires_executable_stack "$file" && die "$real still asks for an executable stack"
      tag=.noexecstack note=", executable-stack flag cleared"
    fi
    printf '%s %s %s %s\n' "$real" "$soname" "$(sha256sum < "$file" | cut -d' ' -f1)" \
      "$(stat -Lc %s "$file")" >> "$ROCM_OUT/MANIFEST"
    while (( ${#pids[@]} >= JOBS )); do
      wait -n || die "xz failed"
      local alive=()
      for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
      pids=("${alive[@]}")
    done
    echo "   $real ($soname) $(( $(stat -Lc %s "$file") / 1024 )) KiB$note"
    xz_cached "$original" "$file" "$ROCM_OUT/$real.xz" "$tag" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || die "xz failed"; done
  objdump -T "$ROCM_OUT"/.raw/* 2>/dev/null | grep -o 'GLIBC_2\.[0-9.]*\|GLIBCXX_3\.4\.[0-9]*' |
    sort -uV | awk -F_ '{last[$1] = $0} END {print last["GLIBC"] ", " last["GLIBCXX"]}' > "$ROCM_OUT/NEEDS"
  rm -rf "$ROCM_OUT/.raw" "$ROCM_OUT/.stubs"
  basename "$hiprtc" > "$ROCM_OUT/HIPRTC"
}

if [[ $ROCM_SET == 1 ]]; then
  echo "== pack the ROCm hipRTC runtime into $ROCM_OUT (stubs: ${ROCM_STUBS:-none})"
  pack_rocm
fi

glibc=$(objdump -T "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-* "$BUNDLE"/deps/* 2>/dev/null |
  grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1)
glibcxx=$(objdump -T "$BUNDLE"/libhipacm.so.1 "$BUNDLE"/hipacm-* 2>/dev/null |
  grep -o 'GLIBCXX_3\.4\.[0-9]*' | sort -uV | tail -1)
{
  echo "built: $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(c++ --version | sed -n 1p)"
  echo "commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- hip_backend plugin include || echo ' (+ uncommitted changes)')"
  echo "needs: $glibc, $glibcxx"
  echo "deps: $(cd "$BUNDLE/deps" && ls | tr '\n' ' ')"
  if [[ -f $ROCM_OUT/MANIFEST ]]; then
    echo "rocm: hipRTC $(cat "$ROCM_OUT/HIPRTC") (libamdhip64-5 $(dpkg-query -W -f='${Version}' libamdhip64-5 2>/dev/null), libamd-comgr2 $(dpkg-query -W -f='${Version}' libamd-comgr2 2>/dev/null)), stubs: ${ROCM_STUBS:-none}, needs: $(cat "$ROCM_OUT/NEEDS")"
    echo "rocm files: $(awk '{print $1}' "$ROCM_OUT/MANIFEST" | tr '\n' ' ')"
    echo "rocm unpacked: $(( $(awk '{s += $4} END {print s}' "$ROCM_OUT/MANIFEST") / 1048576 )) MiB, packed: $(( $(du -sk "$ROCM_OUT" | cut -f1) / 1024 )) MiB"
  else
    echo "rocm: not packed (HIPACM_DEVICE_ROCM=0): no hipRTC rows on the device"
  fi
} > "$BUNDLE/BUILD-INFO.txt"
cat "$BUNDLE/BUILD-INFO.txt"
du -sh "$BUNDLE"
size_kib=$(du -sk "$BUNDLE" | cut -f1)
(( size_kib < 52 * 1024 )) || echo "device-bundle: WARNING: the bundle is ${size_kib} KiB; the carry limit is 64 MiB for the whole tree" >&2
echo "device-bundle: ready. On the GPU machine: bash tests/device/run.sh (carry: .device-bundle)"
