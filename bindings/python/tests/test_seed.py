# SPDX-License-Identifier: MIT
"""Triton's seed test (triton-lang/triton#9491), translated: a failing compile
raises from __exit__ yet leaves no mode active, and the next mode compiles."""

import pytest

import hipacm
from conftest import ARCH, STATIC_ASSERT_SOURCE, assert_amdgpu_elf, good_source


def test_failing_compile_resets_the_mode_and_a_fresh_mode_compiles():
    cleaned = []
    with pytest.raises(hipacm.CompilationError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            assert hipacm.active_mode() is not None
            assert hipacm.active_mode() is mode
            mode.submit("seed-x1", STATIC_ASSERT_SOURCE, cleanup=cleaned.append)
    assert hipacm.active_mode() is None

    error = info.value
    assert error.key == "seed-x1"
    assert error.status == hipacm.Status.COMPILATION
    assert isinstance(error.status, hipacm.Status)
    assert "X must be 2" in error.log
    assert "X must be 2" in str(error)
    assert len(cleaned) == 1 and cleaned[0].key == "seed-x1"

    finalized = []
    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        future = mode.submit("seed-good", good_source(), finalize=finalized.append)
    assert hipacm.active_mode() is None
    kernel = future.result()
    assert_amdgpu_elf(kernel.code)
    assert kernel.arch.startswith(ARCH)
    assert kernel.key == "seed-good"
    assert finalized == [kernel]
