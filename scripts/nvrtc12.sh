#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nvrtc12.sh - fetches NVRTC 12 (Debian sid's non-free libnvrtc12 and its builtins) into a cache
# folder and prints the folder that holds libnvrtc.so.12, so that the NVRTC intercept tests also
# run a CUDA 12 program's compiles (the machine's own CUDA is 13). Unpacked with dpkg -x, never
# installed: nothing of the system changes. Reuses the folder while its packages' versions hold.
#
# Environment: HIPACM_NVRTC12_CACHE (/var/cache/hipacm/nvrtc-12), HIPACM_NVRTC12_MIRROR
# (http://deb.debian.org/debian).
set -euo pipefail
cache=${HIPACM_NVRTC12_CACHE:-/var/cache/hipacm/nvrtc-12}
mirror=${HIPACM_NVRTC12_MIRROR:-http://deb.debian.org/debian}
lib=$cache/root/usr/lib/x86_64-linux-gnu
if [[ -e $lib/libnvrtc.so.12 && -e $cache/.done ]]; then
  echo "$lib"
  exit 0
fi
rm -rf "$cache"
mkdir -p "$cache/lists/partial" "$cache/archives/partial" "$cache/debs"
echo "deb $mirror sid non-free" >"$cache/sources.list"
apt_options=(-o "Dir::Etc::SourceList=$cache/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache"
             -o "Dir::Cache::archives=$cache/archives" -o APT::Sandbox::User=root)
apt-get "${apt_options[@]}" -q update >&2
# The builtins package is named after the release: take the one libnvrtc12 depends on.
builtins=$(apt-cache "${apt_options[@]}" depends libnvrtc12 | awk '/Depends: libnvrtc-builtins/ && !found {print $2; found = 1}')
[[ -n $builtins ]] || { echo "nvrtc12: sid's libnvrtc12 names no builtins package" >&2; exit 1; }
(cd "$cache/debs" && apt-get "${apt_options[@]}" -q download libnvrtc12 "$builtins" >&2)
for deb in "$cache"/debs/*.deb; do dpkg -x "$deb" "$cache/root"; done
[[ -e $lib/libnvrtc.so.12 ]] || { echo "nvrtc12: no libnvrtc.so.12 in the packages" >&2; exit 1; }
rm -rf "$cache/lists" "$cache/archives" "$cache/debs"
touch "$cache/.done"
echo "$lib"
