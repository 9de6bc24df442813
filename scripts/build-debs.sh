#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds hipacm's Debian packages from the committed tree (git HEAD) with dpkg-buildpackage -us -uc
# -b, in a temporary directory, and copies the .deb files and the build's record into OUT_DIR
# (default build/debs). Needs the Build-Depends of debian/control (dpkg-checkbuilddeps says which
# are missing) and dpkg-dev; runs lintian on the result when it is installed.
#   scripts/build-debs.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=$(realpath -m "${1:-build/debs}")
dpkg-checkbuilddeps
version=$(dpkg-parsechangelog -S Version)
upstream=${version%-*}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Only what is committed: a package never holds a file that is not in the repository.
src="$work/hipacm-$upstream"
mkdir "$src"
git archive HEAD | tar -x -C "$src"
export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=$(nproc)}"
start=$SECONDS
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
  tail -n 60 "$work/build.log" >&2
  echo "dpkg-buildpackage failed (the whole log: $out_dir/build.log)" >&2
  mkdir -p "$out_dir" && cp "$work/build.log" "$out_dir/"
  exit 1
}
echo "dpkg-buildpackage: $((SECONDS - start)) s wall"
mkdir -p "$out_dir"
rm -f "$out_dir"/*.deb "$out_dir"/*.buildinfo "$out_dir"/*.changes
cp "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$work/build.log" "$out_dir/"
for deb in "$out_dir"/*.deb; do
  echo "== $(basename "$deb")"
  dpkg-deb -c "$deb" | awk '{print $6, $7, $8}' | sed 's/ *$//'
done
if command -v lintian >/dev/null 2>&1; then
  echo "== lintian"
  lintian --info "$out_dir"/*.changes || true
else
  echo "lintian is not installed: packages not checked"
fi
