# SPDX-License-Identifier: MIT
"""load_device=, and the kernel's function_names, module and functions (ABI 1.2)."""

import copy
import ctypes
import gc
import pickle

import pytest

import hipacm
from hipacm import _core, _ffi
from conftest import ARCH, TEMPLATED_SOURCE, good_source

TWO_KERNELS = good_source("zeta") + good_source("alpha")


def compile_in_mode(key, source, name_expressions=()):
    with hipacm.AsyncCompileMode(2, arch=ARCH, isolation="in-process", cache="off") as mode:
        future = mode.submit(key, source, name_expressions=name_expressions)
    return future.result()


def test_function_names_list_every_compiled_kernel_sorted_and_unloaded():
    kernel = compile_in_mode("two-kernels", TWO_KERNELS)
    assert kernel.function_names == ("alpha", "zeta")
    assert kernel.module is None, "nothing is loaded without load_device"
    assert kernel.functions == (None, None)
    assert not hasattr(kernel, "_future_reference"), "an unloaded kernel keeps no future"


def test_function_names_hold_the_lowered_name_of_a_template_instance():
    kernel = compile_in_mode("templated", TEMPLATED_SOURCE, ["scale<float>"])
    assert kernel.function_names == (kernel.lowered_names["scale<float>"],)
    assert kernel.functions == (None,)


def test_a_synchronous_compile_lists_its_functions_and_never_loads():
    kernel = hipacm.compile(TWO_KERNELS, arch=ARCH, key="sync-two")
    assert kernel.function_names == ("alpha", "zeta")
    assert kernel.module is None
    assert kernel.functions == (None, None)


def test_load_device_without_that_device_fails_the_future_with_backend_unavailable():
    finalized, cleaned = [], []
    # No machine has a device 999: the documented outcome is BACKEND_UNAVAILABLE.
    mode = hipacm.AsyncCompileMode(2, arch=ARCH, isolation="in-process", cache="off",
                                   load_device=999)
    assert mode.load_device == 999
    with pytest.raises(hipacm.CompilationError) as info:
        with mode:  # the device is looked up at load time, not at enter
            future = mode.submit("unloadable", good_source("unloadable"),
                                 finalize=finalized.append, cleanup=cleaned.append)
    assert info.value.status == hipacm.Status.BACKEND_UNAVAILABLE
    assert info.value.key == "unloadable"
    assert info.value.message
    assert finalized == []
    assert len(cleaned) == 1, "the cleanup path ran once"
    assert cleaned[0].status == hipacm.Status.BACKEND_UNAVAILABLE
    assert cleaned[0].key == "unloadable"
    with pytest.raises(hipacm.CompilationError) as again:
        future.result()
    assert again.value.status == hipacm.Status.BACKEND_UNAVAILABLE
    assert len(cleaned) == 1, "collecting again runs no callback"
    assert hipacm.active_mode() is None


@pytest.mark.parametrize("load_device, error", [
    (-1, ValueError), (2**31, ValueError), ("0", TypeError), (True, TypeError),
    (0.0, TypeError),
])
def test_bad_load_device_arguments(load_device, error):
    with pytest.raises(error, match="load_device"):
        hipacm.AsyncCompileMode(load_device=load_device)


def test_load_device_defaults_to_compile_only():
    assert hipacm.AsyncCompileMode().load_device is None
    assert hipacm.AsyncCompileMode()._load_device == _ffi.LOAD_NONE
    assert hipacm.AsyncCompileMode(load_device=0)._load_device == 0
    assert hipacm.AsyncCompileMode(load_device=2**31 - 1)._load_device == 2**31 - 1


class _LoadedKernel:
    """A plugin-shaped hipacm_kernel (version 2) with a module, built in Python."""

    def __init__(self, module, functions, names):
        self.names = [n.encode() for n in names]
        self.name_array = (ctypes.c_char_p * len(names))(*self.names)
        self.function_array = (ctypes.c_void_p * len(functions))(*functions)
        self.raw = _ffi.KernelWithCache(struct_size=ctypes.sizeof(_ffi.KernelWithCache),
                                        key=b"loaded", log=b"", arch=b"gfx90a",
                                        module=module, function_names=self.name_array,
                                        functions=self.function_array,
                                        num_functions=len(names))

    def pointer(self):
        return ctypes.cast(ctypes.pointer(self.raw), ctypes.POINTER(_ffi.Kernel))


@pytest.fixture
def counted_references(monkeypatch):
    """Counts future_retain/future_release calls on the fake handle."""
    calls = []
    monkeypatch.setattr(_core._api, "future_retain", lambda h: calls.append(("retain", h)) or 0)
    monkeypatch.setattr(_core._api, "future_release", lambda h: calls.append(("release", h)) or 0)
    return calls


def test_a_loaded_kernel_holds_its_future_until_the_last_copy_is_gone(counted_references):
    fake = _LoadedKernel(0x1000, [0x2000, 0x3000], ["alpha", "zeta"])
    kernel = _core._kernel_from_ptr(fake.pointer(), (), 42)
    assert kernel.module == 0x1000
    assert kernel.function_names == ("alpha", "zeta")
    assert kernel.functions == (0x2000, 0x3000)
    assert counted_references == [("retain", 42)]
    copies = [copy.copy(kernel), copy.deepcopy(kernel)]
    with pytest.raises(TypeError, match="loaded module"):
        pickle.dumps(kernel)
    del kernel
    gc.collect()
    assert counted_references == [("retain", 42)], "a copy still uses the module"
    del copies
    gc.collect()
    assert counted_references == [("retain", 42), ("release", 42)]


def test_an_unloaded_kernel_takes_no_reference(counted_references):
    fake = _LoadedKernel(None, [None], ["alpha"])
    kernel = _core._kernel_from_ptr(fake.pointer(), (), 42)
    assert (kernel.module, kernel.functions) == (None, (None,))
    del kernel
    gc.collect()
    assert counted_references == []


def test_a_version_1_kernel_reads_as_no_functions(counted_references):
    fake = _LoadedKernel(0x1000, [0x2000], ["alpha"])
    fake.raw.struct_size = ctypes.sizeof(_ffi.Kernel)  # a plugin older than ABI 1.2
    kernel = _core._kernel_from_ptr(fake.pointer(), (), 42)
    assert (kernel.function_names, kernel.module, kernel.functions) == ((), None, ())
    assert kernel.from_cache is False
    assert counted_references == []
