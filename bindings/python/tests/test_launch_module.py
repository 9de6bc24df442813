# SPDX-License-Identifier: MIT
"""hipacm.Module with no GPU: the platform chosen from real compiled code objects, the error when
no driver is there (at load, not at import), and a module's lifecycle and launches through a fake
driver that records every call (unloaded once on close, on leaving a with block, on garbage
collection; never at interpreter exit)."""

from __future__ import annotations

import ctypes
import gc
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hipacm
from hipacm import _gpu_drivers, _launch

from conftest import ARCH, TEMPLATED_SOURCE, good_source

PACKAGE_DIR = str(Path(__file__).resolve().parents[1])


@pytest.fixture(scope="module")
def gfx_kernel():
    return hipacm.compile(good_source("vadd"), arch=ARCH)


@pytest.fixture(scope="module")
def templated_kernel():
    return hipacm.compile(TEMPLATED_SOURCE, arch=ARCH,
                          name_expressions=["scale<float>", "scale<double>"])


def cuda_elf() -> bytes:
    """An ELF header with e_machine EM_CUDA (190): what a cubin starts with."""
    header = bytearray(64)
    header[0:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<H", header, 18, 190)
    return bytes(header)


PTX = b"//\n.version 8.0\n.target sm_90\n.address_size 64\n"


class FakeDriver:
    """Records each call; modules, functions and buffers are numbered from 0x100."""

    platform = "cuda"
    not_found = 500

    def __init__(self, sizes=None):
        self.calls = []
        self.sizes = sizes
        self.launches = []
        self.memory = {}
        self.next = 0x100

    def _handle(self):
        self.next += 0x100
        return self.next

    def open_device(self, device):
        self.calls.append(("open_device", device))
        return ("token", device)

    def close_device(self, token):
        self.calls.append(("close_device", token[1]))

    def enter(self, token):
        self.calls.append(("enter",))
        return "saved"

    def leave(self, token, saved):
        assert saved == "saved"
        self.calls.append(("leave",))

    def load(self, code):
        self.loaded = ctypes.string_at(ctypes.addressof(code), ctypes.sizeof(code))
        handle = self._handle()
        self.calls.append(("load", handle))
        return handle

    def unload(self, module):
        self.calls.append(("unload", module))

    def get_function(self, module, name):
        if name == b"missing":
            raise _launch.DriverError("hipacm: cuModuleGetFunction('missing') failed: "
                                      "CUDA_ERROR_NOT_FOUND (500): named symbol not found",
                                      hipacm.Status.INTERNAL, "cuda", "cuModuleGetFunction", 500,
                                      "CUDA_ERROR_NOT_FOUND")
        self.calls.append(("get_function", module, name))
        return self._handle()

    def param_sizes(self, function):
        return self.sizes

    def launch(self, function, grid, block, shared_mem, stream, params):
        count = len(self.sizes) if self.sizes is not None else 0
        values = [params[i] for i in range(count)] if params is not None else []
        self.launches.append((function, grid, block, shared_mem, stream,
                              [ctypes.string_at(v, s) for v, s in zip(values, self.sizes or ())]))

    def alloc(self, nbytes):
        ptr = self._handle()
        self.memory[ptr] = bytearray(nbytes)
        self.calls.append(("alloc", nbytes))
        return ptr

    def free(self, ptr):
        self.calls.append(("free", ptr))

    def htod(self, dst, src, nbytes):
        self.memory[dst][:nbytes] = ctypes.string_at(src, nbytes)

    def dtoh(self, dst, src, nbytes):
        ctypes.memmove(dst, bytes(self.memory[src][:nbytes]), nbytes)

    def synchronize(self):
        self.calls.append(("synchronize",))

    def count(self, what):
        return sum(1 for call in self.calls if call[0] == what)


@pytest.fixture
def fake(monkeypatch):
    driver = FakeDriver(sizes=(8, 8, 4))
    monkeypatch.setitem(_gpu_drivers._drivers, "cuda", driver)
    return driver


# -- platform selection from real code objects


def test_gfx_code_object_is_hip(gfx_kernel):
    assert gfx_kernel.code[:4] == b"\x7fELF"
    assert hipacm.platform_of(gfx_kernel) == "hip"
    assert hipacm.platform_of(gfx_kernel.code) == "hip"   # e_machine 224, without the arch


def test_cuda_bytes_and_arch_are_cuda():
    assert hipacm.platform_of(cuda_elf()) == "cuda"
    assert hipacm.platform_of(PTX) == "cuda"
    assert hipacm.platform_of(b"\x50\xed\x55\xba" + bytes(12)) == "cuda"   # fatbin
    assert hipacm.platform_of(b"opaque", arch="sm_90") == "cuda"
    assert hipacm.platform_of(b"opaque", arch="compute_90") == "cuda"
    assert hipacm.platform_of(b"opaque", arch="gfx1100") == "hip"


def test_arch_and_bytes_that_disagree_are_refused(gfx_kernel):
    with pytest.raises(ValueError, match="arch 'sm_90' is for cuda, but the code object is a hip"):
        hipacm.platform_of(gfx_kernel.code, arch="sm_90")
    with pytest.raises(ValueError, match="cannot tell"):
        hipacm.platform_of(b"opaque")


def test_module_refuses_a_platform_the_code_object_contradicts(gfx_kernel, fake):
    with pytest.raises(ValueError, match="platform='cuda', but the code object is for hip"):
        hipacm.Module(gfx_kernel, platform="cuda")
    with pytest.raises(ValueError, match="platform must be one of"):
        hipacm.Module(gfx_kernel, platform="rocm")
    assert fake.calls == []


# -- no driver: a clear error when a module is made, never at import


def test_no_cuda_driver_is_reported_at_load(monkeypatch):
    monkeypatch.setenv("HIPACM_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1")
    monkeypatch.delitem(_gpu_drivers._drivers, "cuda", raising=False)
    with pytest.raises(hipacm.DriverUnavailableError,
                       match="no CUDA driver on this machine .*/nonexistent/libcuda.so.1") as info:
        hipacm.Module(cuda_elf())
    assert info.value.status == hipacm.Status.BACKEND_UNAVAILABLE
    assert isinstance(info.value, hipacm.BackendUnavailableError)


def test_no_hip_runtime_is_reported_at_load(monkeypatch, gfx_kernel):
    monkeypatch.setenv("HIPACM_HIP_RUNTIME_LIBRARY", "/nonexistent/libamdhip64.so.5")
    monkeypatch.delitem(_gpu_drivers._drivers, "hip", raising=False)
    with pytest.raises(hipacm.DriverUnavailableError, match="no HIP runtime on this machine"):
        hipacm.Module(gfx_kernel)


def test_import_does_not_load_a_driver():
    # In a fresh process: with the plugin found through HIPACM_LIBRARY, which loads no HIP runtime.
    code = ("import sys; sys.path.insert(0, %r); import hipacm, ctypes; "
            "maps = open('/proc/self/maps').read(); "
            "print('libcuda' in maps, 'libamdhip64' in maps, 'numpy' in sys.modules, "
            "'hipacm._launch' in sys.modules)" % PACKAGE_DIR)
    env = dict(os.environ, HIPACM_HIP_RUNTIME_LIBRARY="/nonexistent/x.so",
               HIPACM_CUDA_DRIVER_LIBRARY="/nonexistent/y.so")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    # No driver or runtime is loaded, and numpy is not imported (it is optional).
    assert out.stdout.split() == ["False", "False", "False", "True"]


def test_real_hip_runtime_without_a_gpu_names_the_error(monkeypatch, gfx_kernel):
    monkeypatch.delenv("HIPACM_HIP_RUNTIME_LIBRARY", raising=False)
    monkeypatch.delitem(_gpu_drivers._drivers, "hip", raising=False)
    try:
        _gpu_drivers._open_library("hip")
    except hipacm.DriverUnavailableError as error:
        pytest.skip(f"no HIP runtime here: {error}")
    try:
        module = hipacm.Module(gfx_kernel)
    except hipacm.DriverUnavailableError as error:
        # The runtime's own name and text for the failure, e.g. hipErrorNoDevice (100).
        assert "hipGetDeviceCount failed: hipError" in str(error) or "device" in str(error)
        return
    module.close()
    pytest.skip("this machine has an AMD GPU: the no-device error cannot be seen")


# -- lifecycle and launches (fake driver)


def test_close_unloads_once_and_releases_the_device(fake):
    module = hipacm.Module(cuda_elf(), device=2)
    handle = module.handle
    assert fake.loaded == cuda_elf() + b"\0"    # a NUL after the code: PTX is read as a string
    assert module.platform == "cuda" and module.device == 2 and not module.closed
    module.close()
    module.close()
    assert module.closed and module.handle == 0
    assert fake.calls.count(("unload", handle)) == 1
    # Loading and unloading each ran with the device's context current, put back after.
    assert fake.count("enter") == fake.count("leave") == 2
    del module
    gc.collect()
    assert ("close_device", 2) in fake.calls


def test_with_block_unloads(fake):
    with hipacm.Module(cuda_elf()) as module:
        handle = module.handle
        assert fake.count("unload") == 0
    assert fake.calls.count(("unload", handle)) == 1
    assert "closed" in repr(module)


def test_garbage_collection_unloads_once_the_last_function_goes(fake):
    module = hipacm.Module(cuda_elf())
    handle = module.handle
    function = module.get_function("vadd")
    del module
    gc.collect()
    assert fake.count("unload") == 0          # the Function keeps its Module
    del function
    gc.collect()
    assert fake.calls.count(("unload", handle)) == 1


def test_launch_passes_dimensions_stream_and_argument_bytes(fake):
    module = hipacm.Module(cuda_elf())
    fn = module.get_function("vadd")
    assert fn.param_sizes == (8, 8, 4)
    fn((3, 2), 128, (hipacm.Pointer(0x1000), hipacm.Pointer(0x2000), ctypes.c_int32(77)),
       shared_mem=256, stream=0x55)
    (function, grid, block, shared, stream, values), = fake.launches
    assert function == fn.handle
    assert (grid, block, shared, stream) == ((3, 2, 1), (128, 1, 1), 256, 0x55)
    assert values == [struct.pack("<Q", 0x1000), struct.pack("<Q", 0x2000), struct.pack("<i", 77)]


def test_launch_refuses_a_width_the_kernel_does_not_take(fake):
    fn = hipacm.Module(cuda_elf()).get_function("vadd")
    with pytest.raises(TypeError, match="argument 2 of 'vadd' is 4 bytes wide, but the value given "
                                        "is 8 bytes"):
        fn(1, 1, (hipacm.Pointer(1), hipacm.Pointer(2), ctypes.c_int64(3)))
    with pytest.raises(TypeError, match="takes 3 arguments, 2 given"):
        fn(1, 1, (hipacm.Pointer(1), hipacm.Pointer(2)))
    assert fake.launches == []


def test_declared_types_convert_plain_numbers(fake):
    fn = hipacm.Module(cuda_elf()).get_function(
        "vadd", arg_types=(hipacm.Pointer, hipacm.Pointer, ctypes.c_int32))
    fn(1, 1, (0x10, 0x20, 5))
    assert fake.launches[0][5] == [struct.pack("<Q", 0x10), struct.pack("<Q", 0x20),
                                   struct.pack("<i", 5)]


def test_functions_of_a_closed_module_refuse_to_launch(fake):
    module = hipacm.Module(cuda_elf())
    fn = module.get_function("vadd")
    module.close()
    with pytest.raises(ValueError, match="this Module is closed"):
        fn(1, 1, (hipacm.Pointer(1), hipacm.Pointer(2), ctypes.c_int32(3)))
    with pytest.raises(ValueError, match="this Module is closed"):
        module.get_function("vadd")
    assert fake.launches == []


def test_name_expressions_are_looked_up_by_lowered_name(templated_kernel, monkeypatch):
    driver = FakeDriver(sizes=None)
    driver.platform = "hip"
    monkeypatch.setitem(_gpu_drivers._drivers, "hip", driver)
    module = hipacm.Module(templated_kernel)
    fn = module.get_function("scale<float>")
    lowered = templated_kernel.lowered_names["scale<float>"]
    assert lowered.startswith("_Z") and fn.lowered_name == lowered
    assert ("get_function", module.handle, lowered.encode()) in driver.calls
    assert module.get_function("plain").lowered_name == "plain"


def test_a_missing_function_lists_the_kernels_names(gfx_kernel, monkeypatch):
    driver = FakeDriver()
    monkeypatch.setitem(_gpu_drivers._drivers, "hip", driver)
    with pytest.raises(hipacm.DriverError, match=r"CUDA_ERROR_NOT_FOUND.*this kernel has \['vadd'\]"
                       ) as info:
        hipacm.Module(gfx_kernel).get_function("missing")
    assert info.value.name == "CUDA_ERROR_NOT_FOUND" and info.value.code == 500


def test_device_buffer_round_trip_and_free(fake):
    module = hipacm.Module(cuda_elf())
    with module.alloc(8) as buffer:
        buffer.copy_from_host(struct.pack("<2i", 3, 4))
        assert bytes(buffer.copy_to_host()) == struct.pack("<2i", 3, 4)
        out = bytearray(4)
        assert buffer.copy_to_host(out) is out and out == struct.pack("<i", 3)
        ptr = buffer.ptr
        with pytest.raises(ValueError, match="do not fit"):
            buffer.copy_from_host(bytes(9))
        packed = _launch.pack_arguments([buffer])
        assert struct.unpack("<Q", packed.data) == (ptr,)
    assert fake.calls.count(("free", ptr)) == 1
    with pytest.raises(ValueError, match="freed"):
        buffer.ptr


def test_nothing_is_unloaded_at_interpreter_exit(tmp_path):
    """A module still open at exit is left to the process's end: the driver is never called from
    a finalizer once the interpreter is exiting. One closed explicitly is unloaded at once."""
    script = tmp_path / "exit.py"
    script.write_text(textwrap.dedent(f"""
        import struct, sys
        sys.path.insert(0, {PACKAGE_DIR!r})
        import hipacm
        from hipacm import _gpu_drivers, _launch

        class Driver:
            platform = "cuda"
            def open_device(self, device): return device
            def close_device(self, token): print("close_device", flush=True)
            def enter(self, token): return None
            def leave(self, token, saved): pass
            def load(self, code): return 0x1234
            def unload(self, module): print("unload", hex(module), flush=True)

        _gpu_drivers._drivers["cuda"] = Driver()
        header = bytearray(64); header[0:6] = b"\\x7fELF\\x02\\x01"
        struct.pack_into("<H", header, 18, 190)
        closed = hipacm.Module(bytes(header))
        closed.close()
        print("closed", flush=True)
        kept = hipacm.Module(bytes(header))
        cycle = [kept]
        cycle.append(cycle)   # only a collection at shutdown could free it
        print("exiting", flush=True)
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["unload 0x1234", "closed", "exiting"]
    assert out.stdout.count("unload") == 1, out.stdout
    assert "close_device" not in out.stdout


def test_real_cubin_is_cuda():
    """A cubin compiled by hipacm through NVRTC (where NVRTC is installed) is a CUDA ELF."""
    try:
        kernel = hipacm.compile(good_source("vadd"), arch="sm_90")
    except hipacm.BackendUnavailableError as error:
        pytest.skip(f"no NVRTC here: {error}")
    assert kernel.code[:4] == b"\x7fELF"
    assert struct.unpack_from("<H", kernel.code, 18)[0] == 190
    assert hipacm.platform_of(kernel) == "cuda"
    assert hipacm.platform_of(kernel.code) == "cuda"
    with pytest.raises(ValueError, match="arch 'gfx90a' is for hip, but the code object is a cuda"):
        hipacm.platform_of(kernel.code, arch="gfx90a")
