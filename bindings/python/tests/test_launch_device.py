# SPDX-License-Identifier: MIT
"""Runs tests/device/python_launch_check.py (real kernels launched through hipacm.Module and
checked against CPU references): it passes on a machine with a GPU and its driver, and is
skipped, with the script's reason, where there is none."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "tests" / "device" / "python_launch_check.py"


@pytest.mark.parametrize("arch", ["sm_90", "gfx90a"])
def test_launch_check_on_this_machine(arch):
    out = subprocess.run([sys.executable, str(SCRIPT), "--arch", arch], capture_output=True,
                         text=True, timeout=600, env=dict(os.environ))
    lines = out.stdout.strip().splitlines()
    if out.returncode == 77:
        assert lines and lines[-1].startswith("SKIP: "), out.stdout
        pytest.skip(lines[-1])
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.fullmatch(r"[1-9][0-9]* passed, 0 failed, [0-9]+ skipped", lines[-1]), out.stdout
