# SPDX-License-Identifier: MIT
"""Shared fixtures and kernels for the hipacm Python binding tests.

Run against a fresh build with, from the repository root:

    HIPACM_LIBRARY=$PWD/build/py/libhipacm.so.1 /usr/bin/python3 -m pytest bindings/python/tests
"""

from __future__ import annotations

import gc
import os
import struct
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
