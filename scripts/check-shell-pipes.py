#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Finds pipelines that fail now and then in shell scripts that set pipefail.

A reader that leaves before its writer is done (grep -q, grep -m, head, awk's exit) kills the
writer with SIGPIPE; under `set -o pipefail` the pipeline then fails although the reader found
what it wanted, and only when the writer was still writing: a failure that comes and goes with
load. Such a reader takes its input from a here-string, or reads everything (sed -n 1p).

Usage: check-shell-pipes.py [ROOT]   (default: the repository). Prints each finding, exits 1 if any.
"""
import re
import sys
from pathlib import Path

EARLY_READER = re.compile(r"\|\s*(grep\s+-[A-Za-z]*[qm]|head\b)")
AWK_PROGRAM = re.compile(r"\|\s*awk\s+'([^']*)'")
END_BLOCK = re.compile(r"\bEND\s*\{[^}]*\}")
SKIPPED_DIRS = {"build", ".git", "target", "node_modules"}


def shell_files(root):
    for path in sorted(root.rglob("*")):
        if any(part in SKIPPED_DIRS or part.startswith(".") for part in path.relative_to(root).parts):
            continue
        if path.is_file() and (path.suffix in (".sh", ".bash") or path.name.endswith(".bash.in")):
            yield path


def findings(path):
    text = path.read_text(errors="replace")
    if "pipefail" not in text:
        return []
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split(" #", 1)[0]
        if code.lstrip().startswith("#"):
            continue
        awk_exits = any(re.search(r"\bexit\b", END_BLOCK.sub("", program))
                        for program in AWK_PROGRAM.findall(code))
        if EARLY_READER.search(code) or awk_exits:
            found.append(f"{path}:{number}: a reader that may leave early, under pipefail: "
                         f"{line.strip()}")
    return found


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    problems = [finding for path in shell_files(root) for finding in findings(path)]
    for problem in problems:
        print(problem)
    print(f"shell pipes: {len(problems)} finding(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
