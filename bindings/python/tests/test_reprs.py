# SPDX-License-Identifier: MIT
"""Modes, futures, kernels and errors describe themselves in their repr."""

import pytest

import hipacm
from conftest import ARCH, STATIC_ASSERT_SOURCE, good_source


def test_mode_and_future_reprs_follow_their_state():
    mode = hipacm.AsyncCompileMode(2, arch=ARCH, timeout=30)
    assert repr(mode) == ("<hipacm.AsyncCompileMode inactive arch='gfx90a' isolation='auto' "
                          "max_workers=2 timeout=30 futures=0>")
    with mode:
        assert repr(mode).startswith("<hipacm.AsyncCompileMode active arch='gfx90a'")
        future = mode.submit(None, good_source("reprs"))
        assert "futures=1>" in repr(mode)
        text = repr(future)
        assert text.startswith("<hipacm.FutureKernel key='sha256:"), text
        assert "...' arch=gfx90a status=" in text, text
    kernel = future.result()
    assert repr(future).endswith("status=SUCCESS collected>")
    text = repr(kernel)
    assert text.startswith("<hipacm.Kernel key='sha256:") and "arch='gfx90a'" in text, text
    assert f"code={len(kernel.code)} bytes functions=['reprs'] compiled in " in text, text


def test_error_reprs_name_the_status():
    with pytest.raises(hipacm.CompilationError) as info:
        hipacm.compile(STATIC_ASSERT_SOURCE, arch=ARCH, key="seed")
    text = repr(info.value)
    assert text.startswith("CompilationError(status=COMPILATION, key='seed', message=")
    assert text.endswith(f"log={len(info.value.log.splitlines())} lines)")
    with pytest.raises(hipacm.InvalidArgumentError) as bad:
        hipacm.compile(good_source(), arch="gfx9999")
    assert repr(bad.value).startswith("InvalidArgumentError(status=INVALID_ARGUMENT, message=")
