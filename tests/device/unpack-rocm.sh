#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# unpack-rocm.sh - unpacks the bundle's xz-compressed ROCm hipRTC runtime into a directory, checks
# every file against the bundle's manifest, adds the soname links and prints hipRTC's path.
#
# usage: unpack-rocm.sh BUNDLE_ROCM_DIR DEST_DIR
# Exit status: 0 unpacked; 77 the bundle has no ROCm runtime (made with HIPACM_DEVICE_ROCM=0);
# 1 anything else (no xz, a damaged file).
set -uo pipefail
src=${1:?usage: unpack-rocm.sh BUNDLE_ROCM_DIR DEST_DIR}
dest=${2:?usage: unpack-rocm.sh BUNDLE_ROCM_DIR DEST_DIR}

fail() { echo "unpack-rocm: $*" >&2; exit 1; }
if [[ ! -f $src/MANIFEST ]]; then
  echo "unpack-rocm: no $src/MANIFEST: the bundle was made with HIPACM_DEVICE_ROCM=0" >&2
  exit 77
fi
command -v xz >/dev/null ||
  fail "xz is not installed here; it is needed to unpack the ROCm runtime (package xz-utils)"
command -v sha256sum >/dev/null || fail "sha256sum is not installed here (package coreutils)"
mkdir -p "$dest" || fail "cannot create $dest"

# MANIFEST: one line per library: real file name, soname, sha256 and size of the unpacked file.
pids=()
while read -r real _ _ _; do
  [[ -f $src/$real.xz ]] || fail "$src/$real.xz is missing"
  xz -dc "$src/$real.xz" > "$dest/$real" &
  pids+=($!)
done < "$src/MANIFEST"
for pid in "${pids[@]}"; do wait "$pid" || fail "xz could not unpack every file of $src"; done

while read -r real soname sha size; do
  [[ $(stat -c %s "$dest/$real") == "$size" ]] || fail "$real: unpacked size is not $size"
  [[ $(sha256sum < "$dest/$real" | cut -d' ' -f1) == "$sha" ]] || fail "$real: sha256 mismatch"
  [[ $real == "$soname" ]] || ln -sfn "$real" "$dest/$soname"
done < "$src/MANIFEST"

hiprtc=$dest/$(cat "$src/HIPRTC")
[[ -e $hiprtc ]] || fail "no $hiprtc after unpacking"
echo "$hiprtc"
