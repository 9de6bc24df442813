#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that every source file in the repository names its licence (SPDX) in its first lines;
# with --add, inserts the identifier into files that lack it (after a shebang, if any).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check
[[ "${1:-}" == "--add" ]] && mode=add

comment_for() {
  case "$1" in
    *.py | *.sh | *.cmake | *CMakeLists.txt | *.toml | *.in | *.supp | .gitignore | */.gitignore | .clang-format) echo "# SPDX-License-Identifier: MIT" ;;
    *.map | *.c) echo "/* SPDX-License-Identifier: MIT */" ;;
    *) echo "// SPDX-License-Identifier: MIT" ;;
  esac
}

missing=0
while IFS= read -r file; do
  [[ -f "$file" ]] || continue
  # Here-strings, not pipes into grep -q: under pipefail a writer that grep -q left early fails.
  if grep -q 'SPDX-License-Identifier: MIT' <<<"$(head -n 3 "$file")"; then continue; fi
  if [[ "$mode" == check ]]; then
    echo "no SPDX-License-Identifier in the first 3 lines: $file" >&2
    missing=$((missing + 1))
    continue
  fi
  line="$(comment_for "$file")"
  if grep -q '^#!' <<<"$(head -n 1 "$file")"; then
    sed -i "1a $line" "$file"
  else
    sed -i "1i $line" "$file"
  fi
done < <(git ls-files -- '*.c' '*.h' '*.hpp' '*.cpp' '*.hip' '*.py' '*.rs' '*.sh' '*.cmake' \
  '*CMakeLists.txt' '*.toml' '*.map' '*.in' ':!:tests/fuzz/corpus/*' ':!:*/Cargo.lock')

if [[ "$mode" == check && "$missing" -gt 0 ]]; then
  echo "$missing file(s) lack an SPDX licence line (scripts/check-spdx.sh --add fixes them)" >&2
  exit 1
fi
