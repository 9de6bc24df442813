# SPDX-License-Identifier: MIT
"""The package installs offline with pip and the setuptools backend alone."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hipacm

SOURCE = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("pip", "setuptools", "wheel")),
                    reason="needs pip, setuptools and wheel (python3-pip, python3-setuptools, python3-wheel)")
def test_pip_install_offline_without_build_isolation(tmp_path):
    src = tmp_path / "src"  # a copy: in-tree builds would litter the checkout
    shutil.copytree(SOURCE, src, ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__", "*.so*", "hipacm-worker"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                    "--no-index", "--no-deps", "--disable-pip-version-check",
                    "--target", str(target), str(src)], check=True, timeout=300)
    assert (target / "hipacm" / "py.typed").is_file()
    assert not list((target / "hipacm").glob("*.so*"))
    env = dict(os.environ, PYTHONPATH=str(target), HIPACM_LIBRARY=hipacm.library_path)
    code = ("import hipacm; print(hipacm.__file__); "
            "print(hipacm.compile('extern \"C\" __global__ void k(int* p) { *p = 1; }', "
            "arch='gfx90a').code[:4])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=str(tmp_path), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(target / "hipacm" / "__init__.py"), "b'\\x7fELF'"]
