#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# exported_symbols_test.sh - asserts a library exports exactly the header's hipacm_* functions and its SONAME.
#
# Usage: exported_symbols_test.sh NM READELF HEADER LIBRARY EXPECTED_SONAME [PRIVATE_HEADER...]
#   NM, READELF      binutils or LLVM tools (CMake passes CMAKE_NM and CMAKE_READELF)
#   HEADER           include/hipacm/hipacm.h: every "HIPACM_API ... hipacm_xxx(" line declares one
#   LIBRARY          the shared library to inspect
#   EXPECTED_SONAME  e.g. libhipacm.so.1
#   PRIVATE_HEADER   e.g. plugin/abi/intercept_abi.h: every "HIPACM_PRIVATE_API ... hipacm_xxx(" line
#                    declares one more function the library may export (private between the
#                    libraries of one build, never in the public header)
#
# The defined dynamic symbols must be exactly those functions (as code, "T"), each exported once.
# The one kind of extra symbol allowed is a symbol-version definition that a linker version script
# adds as an absolute symbol (e.g. "A HIPACM_1"), and only when the exported functions carry that
# version. Prints "exported symbols: ok" and exits 0, or lists every problem and exits 1.
set -euo pipefail
# Membership is tested with here-strings, never "printf ... | grep -q": grep -q leaves at its first
# match, the printf still writing then dies of SIGPIPE, and pipefail turns a match into a miss.

if [[ $# -lt 5 ]]; then
  echo "usage: $0 NM READELF HEADER LIBRARY EXPECTED_SONAME [PRIVATE_HEADER...]" >&2
  exit 2
fi
nm_tool=$1
readelf_tool=$2
header=$3
library=$4
expected_soname=$5
shift 5
private_headers=("$@")

for f in "$header" "$library" "${private_headers[@]+"${private_headers[@]}"}"; do
  if [[ ! -f $f ]]; then
    echo "exported symbols: no such file: $f" >&2
    exit 1
  fi
done

problems=0
problem() {
  echo "exported symbols: $*"
  problems=$((problems + 1))
}

# The functions the header declares.
declarations=$(grep -c '^HIPACM_API ' "$header" || true)
expected=$(sed -nE 's/^HIPACM_API [^(]*[^A-Za-z0-9_](hipacm_[A-Za-z0-9_]+)\)?[[:space:]]*\(.*/\1/p' \
  "$header" | LC_ALL=C sort)
expected_count=$(printf '%s\n' "$expected" | grep -c . || true)
if [[ $expected_count -eq 0 || $expected_count -ne $declarations ]]; then
  echo "exported symbols: parsed $expected_count function names from $declarations HIPACM_API" \
    "lines of $header; the header parser needs updating" >&2
  exit 1
fi
for private_header in "${private_headers[@]+"${private_headers[@]}"}"; do
  private_declarations=$(grep -c '^HIPACM_PRIVATE_API ' "$private_header" || true)
  private=$(sed -nE \
    's/^HIPACM_PRIVATE_API [^(]*[^A-Za-z0-9_](hipacm_[A-Za-z0-9_]+)[[:space:]]*\(.*/\1/p' \
    "$private_header")
  private_count=$(printf '%s\n' "$private" | grep -c . || true)
  if [[ $private_count -ne $private_declarations ]]; then
    echo "exported symbols: parsed $private_count function names from $private_declarations" \
      "HIPACM_PRIVATE_API lines of $private_header; the header parser needs updating" >&2
    exit 1
  fi
  expected=$(printf '%s\n%s\n' "$expected" "$private" | grep . | LC_ALL=C sort)
  expected_count=$((expected_count + private_count))
done
if [[ -n $(printf '%s\n' "$expected" | uniq -d) ]]; then
  echo "exported symbols: the header declares a function twice:" \
    "$(printf '%s\n' "$expected" | uniq -d | tr '\n' ' ')" >&2
  exit 1
fi
if ! grep -qx 'hipacm_get_provider' <<<"$expected"; then
  echo "exported symbols: hipacm_get_provider not found in $header" >&2
  exit 1
fi

# Defined dynamic symbols: "VALUE TYPE NAME[@[@]VERSION]" (absolute ones may have no value).
if ! nm_output=$("$nm_tool" -D --defined-only "$library"); then
  echo "exported symbols: $nm_tool -D --defined-only $library failed" >&2
  exit 1
fi
functions=()
versions=()
absolutes=()
others=()
while read -r line; do
  [[ -z $line ]] && continue
  # shellcheck disable=SC2086
  set -- $line
  if [[ $# -eq 3 ]]; then
    type=$2 symbol=$3
  elif [[ $# -eq 2 ]]; then
    type=$1 symbol=$2
  else
    problem "cannot parse nm line: $line"
    continue
  fi
  name=${symbol%%@*}
  version=""
  [[ $symbol == *@* ]] && version=${symbol##*@}
  case $type in
    T)
      functions+=("$name")
      [[ -n $version ]] && versions+=("$version")
      ;;
    A) absolutes+=("$name") ;;
    *) others+=("$type $symbol") ;;
  esac
done <<<"$nm_output"

actual=$(printf '%s\n' "${functions[@]+"${functions[@]}"}" | grep . | LC_ALL=C sort || true)
while read -r name; do
  [[ -z $name ]] && continue
  if ! grep -qxF "$name" <<<"$actual"; then
    problem "missing export: $name (declared in the header)"
  fi
done <<<"$expected"
while read -r name; do
  [[ -z $name ]] && continue
  if ! grep -qxF "$name" <<<"$expected"; then
    problem "unexpected export: $name (a function the header does not declare)"
  fi
done <<<"$actual"
duplicates=$(printf '%s\n' "$actual" | uniq -d)
if [[ -n $duplicates ]]; then
  problem "exported more than once (several versions): $(echo "$duplicates" | tr '\n' ' ')"
fi
for entry in "${others[@]+"${others[@]}"}"; do
  problem "unexpected export: $entry (only functions may be exported)"
done
for name in "${absolutes[@]+"${absolutes[@]}"}"; do
  if ! grep -qxF "$name" <<<"$(printf '%s\n' "${versions[@]+"${versions[@]}"}")"; then
    problem "unexpected export: A $name (an absolute symbol that is no version of the functions)"
  fi
done

# The SONAME.
if ! dynamic=$("$readelf_tool" -d "$library"); then
  echo "exported symbols: $readelf_tool -d $library failed" >&2
  exit 1
fi
soname=$(printf '%s\n' "$dynamic" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
if [[ $soname != "$expected_soname" ]]; then
  problem "SONAME is '${soname}', expected '$expected_soname'"
fi

if [[ $problems -ne 0 ]]; then
  echo "exported symbols: $problems problem(s) in $library"
  exit 1
fi
echo "exported symbols: ok ($expected_count functions, SONAME $soname)"
