# SPDX-License-Identifier: MIT
"""Shared fixtures and kernels for the hipacm Python binding tests.

Run against a fresh build with, from the repository root:

    HIPACM_LIBRARY=$PWD/build/py/libhipacm.so.1 /usr/bin/python3 -m pytest bindings/python/tests
"""

from __future__ import annotations

import gc
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

# The tests count and time real compiles: the persistent cache stays off
# unless a test asks for it (test_cache.py does, with its own directories).
os.environ.setdefault("HIPACM_CACHE", "off")

# Test the package in this source tree, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hipacm  # noqa: E402
from hipacm import _callbacks, _core, _mode  # noqa: E402

ARCH = "gfx90a"

TEMPLATED_SOURCE = (
    "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n"
)

# The Triton seed scenario's kernel: a compile-time assertion that fails.
STATIC_ASSERT_SOURCE = (
    'template <int X> struct check { static_assert(X == 2, "hipacm seed: X must be 2"); };\n'
    'extern "C" __global__ void seed(int* p) { check<1> c; (void)c; p[0] = 1; }\n'
)


def good_source(name: str = "vadd") -> str:
    """A small extern "C" kernel that compiles."""
    return (
        f'extern "C" __global__ void {name}(float* a, const float* b, int n) {{\n'
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) a[i] += b[i];\n"
        "}\n"
    )


def assert_amdgpu_elf(code: bytes) -> None:
    """Checks the ELF magic and e_machine == EM_AMDGPU (224), read from the bytes."""
    assert code[:4] == b"\x7fELF", code[:16]
    assert code[4] == 2, "expected ELFCLASS64"
    endian = "<" if code[5] == 1 else ">"
    (e_machine,) = struct.unpack_from(endian + "H", code, 18)
    assert e_machine == 224, e_machine


class Boom(Exception):
    """Raised by test callbacks."""


@pytest.fixture(autouse=True)
def clean_plugin_state():
    """Every test starts and ends with no active mode and no callback entry alive."""
    assert hipacm.active_mode() is None
    assert _core._api.active_mode() is None
    yield
    gc.collect()
    leftover = _mode._current_mode
    if _core._api.active_mode() is not None and leftover is not None:
        try:  # keep one broken test from failing every later one
            leftover.__exit__(None, None, None)
        except BaseException:
            pass
        pytest.fail("a test left a mode active")
    assert hipacm.active_mode() is None
    assert _callbacks._live_callback_entries() == 0, "callback registry entries leaked"


SHIM_CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
SHIM_INCLUDE = Path(__file__).resolve().parents[3] / "include"


def run_with_shim_plugin(tmp_path: Path, c_source: str, script: str) -> list[str]:
    """Builds `c_source` (a plugin that forwards to the real one, named REAL) as
    libhipacm.so.1 in `tmp_path`, runs `script` in a fresh interpreter that loads it, and
    returns the lines it printed (the test fails if the script does)."""
    src = tmp_path / "shim.c"
    src.write_text(c_source)
    lib = tmp_path / "libhipacm.so.1"
    subprocess.run([SHIM_CC, "-shared", "-fPIC", f"-I{SHIM_INCLUDE}",
                    f'-DREAL="{hipacm.library_path}"', str(src), "-o", str(lib), "-ldl"],
                   check=True)
    env = dict(os.environ, PYTHONPATH=str(Path(hipacm.__file__).resolve().parents[1]),
               HIPACM_LIBRARY=str(lib))
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()
