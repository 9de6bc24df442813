#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build into a temporary prefix and checks one part of what a package ships:
#   packaging_test.sh BUILD_DIR pkg_config|library|docs|man_pages|completion
set -euo pipefail
build_dir=$1 check=$2
source_dir=$(cd "$(dirname "$0")" && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
fail() { echo "packaging_test $check: $*" >&2; exit 1; }

# The installed tree's lib directory (lib, or lib/<multiarch> for a /usr build) holds hipacm.pc.
pc=$(find "$prefix" -path '*/pkgconfig/hipacm.pc' -print -quit)
[[ -n $pc ]] || fail "no pkgconfig/hipacm.pc under the prefix"
libdir=$(dirname "$(dirname "$pc")")

# The ABI the installed header declares names the library file (libhipacm.so.MAJOR.MINOR.0).
abi() { sed -n "s/^#define HIPACM_ABI_VERSION_$1 \\([0-9][0-9]*\\)\$/\\1/p" "$prefix/include/hipacm/hipacm.h"; }
major=$(abi MAJOR) minor=$(abi MINOR)
[[ -n $major && -n $minor ]] || fail "no ABI version in the installed hipacm.h"

case $check in
  pkg_config)
    export PKG_CONFIG_PATH="$libdir/pkgconfig"
    read -ra words <<<"$(pkg-config --cflags --libs hipacm)"  # one space between flags, none after
    flags="${words[*]}"
    expected="-I$prefix/include -L$libdir -lhipacm"
    [[ $flags == "$expected" ]] || fail "pkg-config says '$flags', expected '$expected'"
    version=$(pkg-config --modversion hipacm)
    [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "pkg-config --modversion says '$version'"
    # A consumer built from nothing but those flags compiles, links and runs.
    # shellcheck disable=SC2086  # the flags are words
    cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$prefix/pkg_config_consumer" \
      "$source_dir/pkg_config/pkg_config_consumer.c" $flags
    LD_LIBRARY_PATH="$libdir" "$prefix/pkg_config_consumer"
    ;;
  library)
    real="$libdir/libhipacm.so.$major.$minor.0"
    [[ -f $real && ! -L $real ]] || fail "$real is not a regular file"
    [[ $(readlink "$libdir/libhipacm.so.$major") == "libhipacm.so.$major.$minor.0" ]] ||
      fail "libhipacm.so.$major does not point at libhipacm.so.$major.$minor.0"
    [[ $(readlink "$libdir/libhipacm.so") == "libhipacm.so.$major" ]] ||
      fail "libhipacm.so does not point at libhipacm.so.$major"
    soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [[ $soname == "libhipacm.so.$major" ]] || fail "SONAME is '$soname', expected libhipacm.so.$major"
    # The tool and the worker land where the library and the tool look for them.
    [[ -x $prefix/bin/hipacm ]] || fail "bin/hipacm not installed"
    worker=$(find "$prefix" -path '*/hipacm/hipacm-worker' -type f -perm -u+x -print -quit)
    [[ -n $worker ]] || fail "hipacm-worker not installed"
    ;;
  docs)
    doc="$prefix/share/doc/hipacm"
    for file in LICENSE README.md docs/INSTALL.md docs/ABI.md; do
      [[ -s $doc/$file ]] || fail "share/doc/hipacm/$file not installed"
    done
    cmp -s "$doc/LICENSE" "$source_dir/../../LICENSE" || fail "the installed LICENSE differs"
    ;;
  man_pages)
    man1="$prefix/share/man/man1"
    for page in hipacm hipacm-warmup hipacm-inspect hipacm-cache hipacm-doctor; do
      file="$man1/$page.1"
      [[ -s $file ]] || fail "$page.1 not installed"
      title=${page^^}
      grep -q "^\\.TH \"\\?$title\"\\? \"\\?1\"\\?" "$file" || fail "$page.1 has no .TH $title 1 line"
      if command -v man >/dev/null; then
        text=$(MANWIDTH=100 man -l "$file" 2>&1) || fail "man -l cannot render $page.1: $text"
      else
        text=$(groff -man -Tutf8 "$file" 2>&1) || fail "groff cannot render $page.1: $text"
      fi
      grep -q -- '--help' <<<"$text" || fail "$page.1 does not document --help"
    done
    # Each subcommand's page carries that subcommand's own options.
    grep -q -- 'arch' "$man1/hipacm-warmup.1" || fail "hipacm-warmup.1 lacks --arch"
    grep -q 'verify' "$man1/hipacm-cache.1" || fail "hipacm-cache.1 lacks its subcommands"
    ;;
  completion)
    file="$prefix/share/bash-completion/completions/hipacm"
    [[ -s $file ]] || fail "share/bash-completion/completions/hipacm not installed"
    bash -n "$file" || fail "the completion file does not parse"
    # Complete like bash would, and compare with what the tool accepts.
    complete_words() {
      bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hipacm
               printf "%s\n" "${COMPREPLY[@]}"' _ "$file" "$@"
    }
    [[ $(complete_words hipacm war) == warmup ]] || fail "'hipacm war' does not complete to warmup"
    [[ $(complete_words hipacm cache ver) == verify ]] || fail "'hipacm cache ver' is not verify"
    grep -qx -- --arch <<<"$(complete_words hipacm warmup kernels --ar)" ||
      fail "'hipacm warmup --ar' does not offer --arch"
    grep -qx -- --json <<<"$(complete_words hipacm doctor --)" ||
      fail "'hipacm doctor --' does not offer --json"
    # Every option the completion offers for warmup, the tool accepts.
    for option in $(complete_words hipacm warmup --); do
      "$prefix/bin/hipacm" warmup --help | grep -q -- "$option" || fail "warmup has no $option"
    done
    ;;
  *) fail "unknown check (pkg_config, library, docs, man_pages, completion)" ;;
esac
echo "packaging_test $check: ok"
