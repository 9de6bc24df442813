# SPDX-License-Identifier: MIT
"""Name expressions, isolation, the synchronous compile, backend info, statuses, arguments."""

import pytest

import hipacm
from hipacm import _callbacks
from conftest import ARCH, STATIC_ASSERT_SOURCE, TEMPLATED_SOURCE, assert_amdgpu_elf, good_source


def test_name_expressions_give_lowered_names():
    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        future = mode.submit("templated", TEMPLATED_SOURCE,
                             name_expressions=["scale<float>", "scale<double>"])
    kernel = future.result()
    assert kernel.lowered_names == {
        "scale<float>": "_Z5scaleIfEvPT_S0_i",
        "scale<double>": "_Z5scaleIdEvPT_S0_i",
    }
    assert list(kernel.lowered_names) == ["scale<float>", "scale<double>"]
    assert_amdgpu_elf(kernel.code)
    assert b"_Z5scaleIfEvPT_S0_i.kd" in kernel.code
    assert kernel.from_cache is False
    assert kernel.compile_seconds > 0
    # Attribute access on the future is forwarded to result(), as in Triton.
    assert future.lowered_names is kernel.lowered_names
    assert future.code is kernel.code


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_isolation_policies_compile(isolation):
    with pytest.raises(hipacm.CompilationError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH, isolation=isolation, timeout=120) as mode:
            good = mode.submit(f"iso-{isolation}", '#include "n.h"\n' + good_source(),
                               options=["-O2"], headers={"n.h": "#define N 4\n"})
            bad = mode.submit(f"iso-bad-{isolation}", STATIC_ASSERT_SOURCE)
            assert good.wait(120) and good.done()
            assert bad.result(ignore_errors=True) is None
    assert info.value.key == f"iso-bad-{isolation}"
    assert "X must be 2" in info.value.log
    assert_amdgpu_elf(good.result().code)
    assert good.status == hipacm.Status.SUCCESS


def test_synchronous_compile():
    kernel = hipacm.compile(TEMPLATED_SOURCE, arch=ARCH, name_expressions=["scale<float>"])
    assert_amdgpu_elf(kernel.code)
    assert kernel.lowered_names == {"scale<float>": "_Z5scaleIfEvPT_S0_i"}
    assert kernel.key.startswith("sha256:")
    assert hipacm.compile(good_source(), arch=ARCH, key="mine").key == "mine"
    with pytest.raises(hipacm.CompilationError) as info:
        hipacm.compile(STATIC_ASSERT_SOURCE, arch=ARCH, key="sync-bad")
    assert info.value.status == hipacm.Status.COMPILATION
    assert info.value.key == "sync-bad" and "X must be 2" in info.value.log


def test_backend_info():
    info = hipacm.backend_info()
    assert isinstance(info, hipacm.BackendInfo)
    assert info.available is True
    assert info.compiler == "hiprtc"
    assert info.version and info.library_path


def test_status_numbers_match_the_plugin():
    assert [int(s) for s in hipacm.Status] == list(range(14))
    for status in hipacm.Status:
        expected = "HIPACM_SUCCESS" if status == 0 else "HIPACM_ERROR_" + status.name
        assert hipacm.status_string(status) == expected


def test_wait_timeout_and_status_while_pending():
    with hipacm.AsyncCompileMode(1, arch=ARCH) as mode:
        first = mode.submit("pending-1", good_source("p1"))
        second = mode.submit("pending-2", good_source("p2"))  # queued behind the first
        assert second.wait(0) is False or second.done()
        assert second.status in (hipacm.Status.NOT_READY, hipacm.Status.SUCCESS)
        assert first.wait() is True
    assert second.done() and second.status == hipacm.Status.SUCCESS
    assert "pending-2" in repr(second)


@pytest.mark.parametrize("timeout", [float("inf"), 1e300, 2.0**64 / 1000.0, 2.0**63 / 1000.0])
def test_trust12_huge_wait_timeouts_wait_for_the_compile(timeout):
    # 2**64 ms used to wrap to 0 ms in ctypes, 2**63 ms to a negative; inf raised.
    with hipacm.AsyncCompileMode(1, arch=ARCH) as mode:
        pending = mode.submit(f"huge-wait-{timeout!r}", good_source("huge_wait"))
        assert pending.wait(timeout) is True
        assert pending.status == hipacm.Status.SUCCESS
    with pytest.raises(ValueError):
        pending.wait(float("nan"))


def test_nested_enter_raises_mode_already_active():
    assert issubclass(hipacm.ModeAlreadyActiveError, RuntimeError)
    with hipacm.AsyncCompileMode(arch=ARCH) as outer:
        with pytest.raises(hipacm.ModeAlreadyActiveError) as info:
            with hipacm.AsyncCompileMode(arch=ARCH):
                pass  # pragma: no cover
        assert info.value.status == hipacm.Status.MODE_ALREADY_ACTIVE
        assert "already active" in str(info.value)
        with pytest.raises(hipacm.ModeAlreadyActiveError):
            outer.__enter__()
        assert hipacm.active_mode() is outer
    assert hipacm.active_mode() is None


def test_mode_object_can_be_entered_again_after_exit():
    mode = hipacm.AsyncCompileMode(arch=ARCH)
    for _ in range(2):
        with mode:
            assert hipacm.active_mode() is mode and mode.active
        assert not mode.active
    with pytest.raises(hipacm.ModeClosedError):
        mode.submit("after-exit", good_source())
    assert _callbacks._live_callback_entries() == 0


@pytest.mark.parametrize("kwargs, match", [
    ({"isolation": "threads"}, "isolation"),
    ({"isolation": None}, "isolation"),
    ({"timeout": 0}, "timeout"),
    ({"timeout": -1.0}, "timeout"),
    ({"timeout": float("nan")}, "timeout"),
    ({"max_workers": 0}, "max_workers"),
    ({"cache": ""}, "cache"),
])
def test_bad_mode_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        hipacm.AsyncCompileMode(**kwargs)


def test_unknown_arch_raises_invalid_argument_with_the_plugin_message():
    with pytest.raises(hipacm.InvalidArgumentError) as info:
        with hipacm.AsyncCompileMode(arch="gfx9999"):
            pass  # pragma: no cover
    assert isinstance(info.value, hipacm.HipacmError) and isinstance(info.value, ValueError)
    assert info.value.status == hipacm.Status.INVALID_ARGUMENT
    assert "gfx9999" in str(info.value) and "gfx90a" in str(info.value)
    assert hipacm.active_mode() is None


def test_bad_submit_arguments_leave_nothing_behind():
    with hipacm.AsyncCompileMode(arch=ARCH) as mode:
        with pytest.raises(hipacm.InvalidArgumentError, match="empty"):
            mode.submit("empty", "", finalize=print)
        with pytest.raises(ValueError, match="NUL"):
            mode.submit("nul", "a\0b", finalize=print)
        with pytest.raises(TypeError, match="single string"):
            mode.submit("opts", good_source(), options="-O3")
        with pytest.raises(TypeError, match="callable"):
            mode.submit("cb", good_source(), finalize=42)
        assert _callbacks._live_callback_entries() == 0
        assert mode._futures == {}
