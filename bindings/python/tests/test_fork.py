# SPDX-License-Identifier: MIT
"""After fork() the child has no active mode; the parent's mode is closed there."""

import os

import pytest

import hipacm
from conftest import ARCH, assert_amdgpu_elf, good_source


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_sees_no_active_mode_and_can_compile():
    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        future = mode.submit("before-fork", good_source())
        assert future.wait(60)
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code only
            code = 1
            try:
                assert hipacm.active_mode() is None
                try:
                    mode.submit("in-child", good_source())
                except hipacm.ModeClosedError:
                    pass
                else:
                    raise AssertionError("submit in the child did not raise ModeClosedError")
                mode.__exit__(None, None, None)  # the parent's mode: nothing to do here
                assert_amdgpu_elf(hipacm.compile(good_source("child"), arch=ARCH).code)
                with hipacm.AsyncCompileMode(arch=ARCH) as child_mode:
                    assert hipacm.active_mode() is child_mode
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert hipacm.active_mode() is mode  # the parent is unaffected
    assert_amdgpu_elf(future.result().code)
