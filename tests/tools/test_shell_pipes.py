# SPDX-License-Identifier: MIT
# test_shell_pipes.py - scripts/check-shell-pipes.py on small made-up scripts, and on this
# repository: early-leaving readers under pipefail are found, safe forms are not.
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "scripts" / "check-shell-pipes.py"


def script(root, body, preamble="set -euo pipefail\n"):
    (root / "job.sh").write_text(f"#!/bin/bash\n{preamble}{body}\n")


def check(root):
    completed = subprocess.run([sys.executable, str(CHECKER), str(root)], capture_output=True,
                               text=True, timeout=120, check=False)
    return completed.returncode, completed.stdout


@pytest.mark.parametrize("line", [
    'printf "%s\\n" "$list" | grep -qxF "$name" || fail',
    'ldconfig -p | grep -m 1 libfoo',
    'find . -name "*.hip" | sort | head -n 1',
    "hiprtc=$(ldconfig -p | awk '$1 == \"libx\" {print $NF; exit}')",
])
def test_an_early_reader_under_pipefail_is_found(tmp_path, line):
    script(tmp_path, line)
    rc, out = check(tmp_path)
    assert rc == 1
    assert "job.sh:3:" in out and "1 finding(s)" in out


@pytest.mark.parametrize("line", [
    'grep -qxF "$name" <<<"$list" || fail',
    'find . -name "*.hip" | sort | sed -n 1p',
    "readelf -lW x | awk '$1 == \"GNU_STACK\" {found = 1} END {exit !found}'",
    '# a comment may say: printf x | grep -q y',
])
def test_safe_forms_are_not_found(tmp_path, line):
    script(tmp_path, line)
    assert check(tmp_path) == (0, "shell pipes: 0 finding(s)\n")


def test_a_script_without_pipefail_is_not_checked(tmp_path):
    script(tmp_path, "ls | grep -q x", preamble="set -eu\n")
    assert check(tmp_path)[0] == 0


def test_this_repository_has_none():
    rc, out = check(REPO)
    assert rc == 0, out
