#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build into a temporary prefix and checks one part of what a package ships:
#   packaging_test.sh BUILD_DIR pkg_config|library|docs|man_pages|completion|completion_zsh|completion_fish
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
    render() {
      if command -v man >/dev/null; then
        MANWIDTH=100 man -l "$1" 2>&1
      else
        groff -man -Tutf8 -P -cbou "$1" 2>&1
      fi
    }
    for page in hipacm hipacm-warmup hipacm-inspect hipacm-cache hipacm-doctor hipacm-run; do
      file="$man1/$page.1"
      [[ -s $file ]] || fail "$page.1 not installed"
      title=${page^^}
      grep -q "^\\.TH \"\\?$title\"\\? \"\\?1\"\\?" "$file" || fail "$page.1 has no .TH $title 1 line"
      text=$(render "$file") || fail "cannot render $page.1: $text"
      grep -q -- '--help' <<<"$text" || fail "$page.1 does not document --help"
      # EXIT STATUS, from the help's "Exit status:" line: every command has a usage error (2).
      statuses=$(sed -n '/^EXIT STATUS/,/^[A-Z]/p' <<<"$text")
      grep -Eq '^ +2 +usage' <<<"$statuses" || fail "$page.1 has no EXIT STATUS section with 2"
    done
    grep -q '^ *128+N *COMMAND was killed' <<<"$(render "$man1/hipacm-run.1")" ||
      fail "hipacm-run.1's EXIT STATUS lacks 128+N"
    # Each subcommand's page carries that subcommand's own options.
    grep -q -- 'arch' "$man1/hipacm-warmup.1" || fail "hipacm-warmup.1 lacks --arch"
    grep -q 'verify' "$man1/hipacm-cache.1" || fail "hipacm-cache.1 lacks its subcommands"
    ;;
  completion | completion_zsh | completion_fish)
    tool="$prefix/bin/hipacm"
    # What each shell offers for the words typed so far (the last one being completed).
    case $check in
      completion)
        file="$prefix/share/bash-completion/completions/hipacm"
        [[ -s $file ]] || fail "share/bash-completion/completions/hipacm not installed"
        bash -n "$file" || fail "the completion file does not parse"
        complete_words() {
          bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hipacm
                   printf "%s\n" "${COMPREPLY[@]}"' _ "$file" "$@"
        }
        ;;
      completion_zsh)
        file="$prefix/share/zsh/site-functions/_hipacm"
        [[ -s $file ]] || fail "share/zsh/site-functions/_hipacm not installed"
        [[ $(head -n 1 "$file") == '#compdef hipacm' ]] || fail "_hipacm does not start with #compdef"
        zsh -n "$file" || fail "_hipacm does not parse"
        # zsh's completion system needs a terminal; its builtins are stood in for by functions that
        # keep its rules (compset -P moves the matched head of PREFIX to IPREFIX; compadd offers
        # the words that start with PREFIX, IPREFIX before each) and print what would be offered.
        complete_words() {
          zsh -f -c '
            compset() {
              [[ $1 == -P ]] || return 1
              local head=${(M)PREFIX##$~2}
              [[ -n $head ]] || return 1
              IPREFIX+=$head PREFIX=${PREFIX#$head}
            }
            compadd() {
              local -a offered
              if [[ $1 == -a ]]; then offered=(${(P)2}); else [[ $1 == -- ]] && shift; offered=("$@"); fi
              local word
              for word in $offered; do [[ $word == ${PREFIX}* ]] && print -r -- "$IPREFIX$word"; done
            }
            _files() { print -r -- "(files)"; }
            _normal() { print -r -- "(command: ${words[*]}, word $CURRENT)"; }
            source "$1" >/dev/null
            shift
            words=("$@") CURRENT=$# PREFIX=${@[-1]} IPREFIX=""
            _hipacm' _ "$file" "$@"
        }
        # After `run --`, the rest is a command of its own.
        [[ $(complete_words "$tool" run --stats -- ls -l) == "(command: ls -l, word 2)" ]] ||
          fail "'hipacm run --stats -- ls -l' is not completed as the command 'ls -l'"
        [[ $(complete_words "$tool" warmup "") == "(files)" ]] || fail "'hipacm warmup' offers no files"
        ;;
      completion_fish)
        file="$prefix/share/fish/vendor_completions.d/hipacm.fish"
        [[ -s $file ]] || fail "share/fish/vendor_completions.d/hipacm.fish not installed"
        fish --no-execute "$file" || fail "hipacm.fish does not parse"
        # The words joined by spaces: an empty last word leaves the trailing space that makes fish
        # complete a new word.
        complete_words() {
          fish -N -c 'source $argv[1]; complete -C $argv[2]' "$file" "$*" | cut -f 1
        }
        PATH="$prefix/bin:$PATH"
        grep -qx -- 'warmup' <<<"$(complete_words hipacm "")" || fail "'hipacm ' does not offer warmup"
        ;;
    esac
    name=hipacm
    [[ $check == completion_fish ]] || name=$tool
    [[ $(complete_words "$name" war) == warmup ]] || fail "'hipacm war' does not complete to warmup"
    [[ $(complete_words "$name" cache ver) == verify ]] || fail "'hipacm cache ver' is not verify"
    # `hipacm help [CMD [SUBCMD]]`, which no --help lists, offers the same command words.
    [[ $(complete_words "$name" hel) == help ]] || fail "'hipacm hel' does not complete to help"
    [[ $(complete_words "$name" help war) == warmup ]] || fail "'hipacm help war' is not warmup"
    [[ $(complete_words "$name" help cache ver) == verify ]] ||
      fail "'hipacm help cache ver' is not verify"
    grep -qx -- --arch <<<"$(complete_words "$name" warmup kernels --ar)" ||
      fail "'hipacm warmup --ar' does not offer --arch"
    grep -qx -- --json <<<"$(complete_words "$name" doctor --)" ||
      fail "'hipacm doctor --' does not offer --json"
    grep -qx -- --archs <<<"$(complete_words "$name" doctor --)" ||
      fail "'hipacm doctor --' does not offer --archs"
    # Every option the completion offers for warmup, the tool accepts.
    warmup_help=$("$tool" warmup --help)
    for option in $(complete_words "$name" warmup --); do
      grep -q -- "$option" <<<"$warmup_help" || fail "warmup has no $option"
    done
    # --arch values: the archs the installed tool says its compilers accept, after a comma too.
    archs=$("$tool" doctor --archs) || fail "'hipacm doctor --archs' failed"
    first=$(head -n 1 <<<"$archs")
    [[ -n $first ]] || fail "'hipacm doctor --archs' listed nothing"
    stem=${first:0:4}
    expected=$(grep "^$stem" <<<"$archs")
    [[ $(complete_words "$name" warmup --arch "$stem") == "$expected" ]] ||
      fail "'hipacm warmup --arch $stem' does not offer the archs starting with $stem"
    [[ $(complete_words "$name" warmup -a "$first,$stem") == "$(sed "s/^/$first,/" <<<"$expected")" ]] ||
      fail "'hipacm warmup -a $first,$stem' does not offer the next arch of the list"
    # "--arch=A,B": bash splits it at '=' into three words and offers the list's items; zsh and
    # fish keep one word and offer it whole.
    if [[ $check == completion ]]; then
      words=(--arch = "$first,$stem") offered="$first,"
    else
      words=("--arch=$first,$stem") offered="--arch=$first,"
    fi
    [[ $(complete_words "$name" warmup "${words[@]}") == "$(sed "s/^/$offered/" <<<"$expected")" ]] ||
      fail "'hipacm warmup --arch=$first,$stem' does not offer the next arch of the list"
    [[ -z $(complete_words "$name" warmup --arch "no-such-arch") ]] ||
      fail "'hipacm warmup --arch no-such-arch' offers something"
    ;;
  *) fail "unknown check (pkg_config, library, docs, man_pages, completion, completion_zsh, completion_fish)" ;;
esac
echo "packaging_test $check: ok"
