# SPDX-License-Identifier: MIT
"""Each FutureKernel owns exactly one plugin reference, released once."""

import gc

import hipacm
from hipacm import _core
from conftest import ARCH, good_source


def plugin_knows(handle):
    # An unknown (released) handle is INVALID_ARGUMENT, never a crash.
    return _core._api.future_status(handle) != hipacm.Status.INVALID_ARGUMENT


def test_future_reference_released_once_including_dedup_hits():
    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        first = mode.submit("lifetime", good_source())
        hits = [mode.submit("lifetime", good_source()) for _ in range(5)]
        assert all(h is first for h in hits)
        handle = first._fstate.handle
        del hits
    # The mode's own reference is gone; the FutureKernel's one keeps it alive
    # (an extra release for a dedup hit would have freed it by now).
    gc.collect()
    assert plugin_knows(handle)
    assert first.result().code[:4] == b"\x7fELF"
    finalizer = first._release
    del first
    gc.collect()
    assert not finalizer.alive
    assert not plugin_knows(handle)  # released (a leaked dedup reference would keep it)


def test_future_outlives_its_mode_and_the_kernel_copy_outlives_the_future():
    with hipacm.AsyncCompileMode(arch=ARCH) as mode:
        future = mode.submit("outlive", good_source())
    kernel = future.result()
    del future, mode
    gc.collect()
    assert kernel.code[:4] == b"\x7fELF" and kernel.key == "outlive"
