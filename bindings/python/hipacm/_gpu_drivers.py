# SPDX-License-Identifier: MIT
"""The GPU driver side of the launch helper: which platform a code object is for, the HIP
module API (libamdhip64) and the CUDA driver API (libcuda.so.1) behind one small interface,
and the errors their calls raise."""

from __future__ import annotations

import ctypes
import os
import struct
import threading
from ctypes import byref, c_int, c_size_t, c_uint, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._core import Kernel
from ._errors import BackendUnavailableError, HipacmError, Status

PLATFORMS = ("cuda", "hip")


class DriverError(HipacmError):
    """A driver call failed.

    Attributes:
        platform: ``"cuda"`` or ``"hip"``.
        call: The failing call, e.g. ``"cuLaunchKernel"``.
        code: The driver's numeric result.
        name: The driver's name for it, e.g. ``"CUDA_ERROR_INVALID_VALUE"``.
    """

    def __init__(self, message: str, status: "Status | int" = Status.INTERNAL, platform: str = "",
                 call: str = "", code: int = 0, name: str = "") -> None:
        super().__init__(message, status)
        self.platform = platform
        self.call = call
        self.code = code
        self.name = name

    def __reduce__(self) -> Any:
        return (type(self), (self.message, int(self.status), self.platform, self.call,
                             self.code, self.name))


class DriverUnavailableError(BackendUnavailableError):
    """No driver library, no device, or no device with the asked index: raised when a
    :class:`Module` is made, never at import (``BACKEND_UNAVAILABLE``)."""


# -- platforms


_EM_AMDGPU = 224
_EM_CUDA = 190
_FATBIN_MAGIC = b"\x50\xed\x55\xba"


def _platform_of_code(code: bytes) -> Optional[str]:
    if code[:4] == b"\x7fELF" and len(code) >= 20:
        (machine,) = struct.unpack_from("<H" if code[5] == 1 else ">H", code, 18)
        return {_EM_AMDGPU: "hip", _EM_CUDA: "cuda"}.get(machine)
    if code.startswith(b"__CLANG_OFFLOAD_BUNDLE__"):
        return "hip"
    if code[:4] == _FATBIN_MAGIC:
        return "cuda"
    head = code[:4096]
    if b".version" in head and b".target" in head:
        return "cuda"  # PTX text
    return None


def _platform_of_arch(arch: str) -> Optional[str]:
    if arch.startswith(("sm_", "compute_")):
        return "cuda"
    if arch.startswith(("gfx", "amdgcn")):
        return "hip"
    return None


def platform_of(kernel: Union[Kernel, bytes], arch: Optional[str] = None) -> str:
    """``"cuda"`` or ``"hip"`` for a Kernel or code object: from the arch (``sm_*``/``compute_*``
    or ``gfx*``) and from the bytes (ELF e_machine, offload bundle, fatbin, PTX text), which must
    agree where both tell.

    Raises:
        ValueError: Neither tells, or they disagree.
    """
    code = kernel.code if isinstance(kernel, Kernel) else bytes(kernel)
    if isinstance(kernel, Kernel) and arch is None:
        arch = kernel.arch
    by_arch = _platform_of_arch(arch) if arch else None
    by_code = _platform_of_code(code)
    if by_arch and by_code and by_arch != by_code:
        raise ValueError(f"hipacm: the arch {arch!r} is for {by_arch}, but the code object is "
                         f"a {by_code} one")
    platform = by_arch or by_code
    if platform is None:
        raise ValueError("hipacm: cannot tell whether this code object is for CUDA or HIP; "
                         "pass platform='cuda' or platform='hip'")
    return platform


# -- drivers


def _library_candidates(platform: str) -> List[str]:
    if platform == "cuda":
        override = os.environ.get("HIPACM_CUDA_DRIVER_LIBRARY")
        return [override] if override else ["libcuda.so.1"]
    override = os.environ.get("HIPACM_HIP_RUNTIME_LIBRARY")
    return [override] if override else ["libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5", "libamdhip64.so"]


def _open_library(platform: str) -> ctypes.CDLL:
    tried = []
    for name in _library_candidates(platform):
        try:
            return ctypes.CDLL(name)
        except OSError as error:
            tried.append(f"{name}: {error}")
    what = "CUDA driver" if platform == "cuda" else "HIP runtime"
    raise DriverUnavailableError(f"hipacm: no {what} on this machine ({'; '.join(tried)})",
                                 Status.BACKEND_UNAVAILABLE)


class _Driver:
    """What Module needs of a driver. Each method raises DriverError for a failed call."""

    platform = ""
    not_found = -1  # the driver's "named symbol not found"
    no_device: Tuple[int, ...] = ()
    out_of_memory = -1

    def __init__(self, lib: Any) -> None:
        self.lib = lib

    def _fn(self, names: Sequence[str], argtypes: Sequence[Any], required: bool = True) -> Any:
        for name in names:
            fn = getattr(self.lib, name, None)
            if fn is not None:
                fn.argtypes = list(argtypes)
                fn.restype = c_int
                return fn
        if required:
            raise DriverUnavailableError(f"hipacm: the {self.platform} driver lacks {names[0]}",
                                         Status.BACKEND_UNAVAILABLE)
        return None

    def error_text(self, code: int) -> Tuple[str, str]:
        raise NotImplementedError

    def check(self, code: int, call: str) -> None:
        if code == 0:
            return
        name, text = self.error_text(code)
        message = f"hipacm: {call} failed: {name} ({code}): {text}"
        if code in self.no_device:
            raise DriverUnavailableError(message, Status.BACKEND_UNAVAILABLE)
        status = Status.OUT_OF_MEMORY if code == self.out_of_memory else Status.INTERNAL
        raise DriverError(message, status, self.platform, call, code, name)


class _CudaDriver(_Driver):
    platform = "cuda"
    not_found = 500            # CUDA_ERROR_NOT_FOUND
    no_device = (100, 101)     # CUDA_ERROR_NO_DEVICE, CUDA_ERROR_INVALID_DEVICE
    out_of_memory = 2          # CUDA_ERROR_OUT_OF_MEMORY
    _invalid_value = 1

    def __init__(self, lib: Any) -> None:
        super().__init__(lib)
        p, u, sz = c_void_p, c_uint, c_size_t
        self.cuGetErrorName = self._fn(["cuGetErrorName"], [c_int, ctypes.POINTER(ctypes.c_char_p)])
        self.cuGetErrorString = self._fn(["cuGetErrorString"],
                                         [c_int, ctypes.POINTER(ctypes.c_char_p)])
        self.cuInit = self._fn(["cuInit"], [u])
        self.cuDeviceGet = self._fn(["cuDeviceGet"], [ctypes.POINTER(c_int), c_int])
        self.cuDevicePrimaryCtxRetain = self._fn(["cuDevicePrimaryCtxRetain"],
                                                 [ctypes.POINTER(p), c_int])
        self.cuDevicePrimaryCtxRelease = self._fn(
            ["cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"], [c_int])
        self.cuCtxPushCurrent = self._fn(["cuCtxPushCurrent_v2", "cuCtxPushCurrent"], [p])
        self.cuCtxPopCurrent = self._fn(["cuCtxPopCurrent_v2", "cuCtxPopCurrent"],
                                        [ctypes.POINTER(p)])
        self.cuCtxSynchronize = self._fn(["cuCtxSynchronize"], [])
        self.cuModuleLoadData = self._fn(["cuModuleLoadData"], [ctypes.POINTER(p), p])
        self.cuModuleGetFunction = self._fn(["cuModuleGetFunction"],
                                            [ctypes.POINTER(p), p, ctypes.c_char_p])
        self.cuModuleUnload = self._fn(["cuModuleUnload"], [p])
        self.cuLaunchKernel = self._fn(["cuLaunchKernel"],
                                       [p, u, u, u, u, u, u, u, p, ctypes.POINTER(p), p])
        self.cuMemAlloc = self._fn(["cuMemAlloc_v2"], [ctypes.POINTER(ctypes.c_uint64), sz])
        self.cuMemFree = self._fn(["cuMemFree_v2"], [ctypes.c_uint64])
        self.cuMemcpyHtoD = self._fn(["cuMemcpyHtoD_v2"], [ctypes.c_uint64, p, sz])
        self.cuMemcpyDtoH = self._fn(["cuMemcpyDtoH_v2"], [p, ctypes.c_uint64, sz])
        # CUDA 12.4 and later: each parameter's offset and size, read from the loaded function.
        self.cuFuncGetParamInfo = self._fn(["cuFuncGetParamInfo"],
                                           [p, sz, ctypes.POINTER(sz), ctypes.POINTER(sz)],
                                           required=False)
        self.check(self.cuInit(0), "cuInit")

    def error_text(self, code: int) -> Tuple[str, str]:
        name, text = ctypes.c_char_p(), ctypes.c_char_p()
        self.cuGetErrorName(code, byref(name))
        self.cuGetErrorString(code, byref(text))
        return ((name.value or b"CUDA_ERROR_UNKNOWN").decode(errors="replace"),
                (text.value or b"unknown error").decode(errors="replace"))

    def open_device(self, device: int) -> Any:
        handle = c_int()
        self.check(self.cuDeviceGet(byref(handle), device), f"cuDeviceGet({device})")
        context = c_void_p()
        self.check(self.cuDevicePrimaryCtxRetain(byref(context), handle),
                   "cuDevicePrimaryCtxRetain")
        return (handle.value, context.value)

    def close_device(self, token: Any) -> None:
        self.cuDevicePrimaryCtxRelease(token[0])

    def enter(self, token: Any) -> Any:
        self.check(self.cuCtxPushCurrent(token[1]), "cuCtxPushCurrent")
        return None

    def leave(self, token: Any, saved: Any) -> None:
        popped = c_void_p()
        self.cuCtxPopCurrent(byref(popped))

    def load(self, code: Any) -> int:
        module = c_void_p()
        self.check(self.cuModuleLoadData(byref(module), code), "cuModuleLoadData")
        return module.value or 0

    def unload(self, module: int) -> None:
        self.cuModuleUnload(module)

    def get_function(self, module: int, name: bytes) -> int:
        function = c_void_p()
        self.check(self.cuModuleGetFunction(byref(function), module, name),
                   f"cuModuleGetFunction({name.decode(errors='replace')!r})")
        return function.value or 0

    def param_sizes(self, function: int) -> Optional[Tuple[int, ...]]:
        if self.cuFuncGetParamInfo is None:
            return None
        sizes: List[int] = []
        offset, size = c_size_t(), c_size_t()
        while len(sizes) < 4096:
            code = self.cuFuncGetParamInfo(function, len(sizes), byref(offset), byref(size))
            if code == self._invalid_value:
                return tuple(sizes)   # past the last parameter
            if code != 0:
                return None           # not supported for this function (or by this driver)
            sizes.append(size.value)
        return None

    def launch(self, function: int, grid: Tuple[int, int, int], block: Tuple[int, int, int],
               shared_mem: int, stream: int, params: Any) -> None:
        self.check(self.cuLaunchKernel(function, *grid, *block, shared_mem, stream, params, None),
                   "cuLaunchKernel")

    def synchronize(self) -> None:
        self.check(self.cuCtxSynchronize(), "cuCtxSynchronize")

    def alloc(self, nbytes: int) -> int:
        ptr = ctypes.c_uint64()
        self.check(self.cuMemAlloc(byref(ptr), nbytes), f"cuMemAlloc({nbytes})")
        return ptr.value

    def free(self, ptr: int) -> None:
        self.cuMemFree(ptr)

    def htod(self, dst: int, src: int, nbytes: int) -> None:
        self.check(self.cuMemcpyHtoD(dst, src, nbytes), "cuMemcpyHtoD")

    def dtoh(self, dst: int, src: int, nbytes: int) -> None:
        self.check(self.cuMemcpyDtoH(dst, src, nbytes), "cuMemcpyDtoH")


class _HipDriver(_Driver):
    platform = "hip"
    not_found = 500            # hipErrorNotFound
    no_device = (100, 101)     # hipErrorNoDevice, hipErrorInvalidDevice
    out_of_memory = 2          # hipErrorOutOfMemory

    def __init__(self, lib: Any) -> None:
        super().__init__(lib)
        p, u, sz = c_void_p, c_uint, c_size_t
        self.lib.hipGetErrorName.restype = ctypes.c_char_p
        self.lib.hipGetErrorName.argtypes = [c_int]
        self.lib.hipGetErrorString.restype = ctypes.c_char_p
        self.lib.hipGetErrorString.argtypes = [c_int]
        self.hipGetDeviceCount = self._fn(["hipGetDeviceCount"], [ctypes.POINTER(c_int)])
        self.hipGetDevice = self._fn(["hipGetDevice"], [ctypes.POINTER(c_int)])
        self.hipSetDevice = self._fn(["hipSetDevice"], [c_int])
        self.hipDeviceSynchronize = self._fn(["hipDeviceSynchronize"], [])
        self.hipModuleLoadData = self._fn(["hipModuleLoadData"], [ctypes.POINTER(p), p])
        self.hipModuleGetFunction = self._fn(["hipModuleGetFunction"],
                                             [ctypes.POINTER(p), p, ctypes.c_char_p])
        self.hipModuleUnload = self._fn(["hipModuleUnload"], [p])
        self.hipModuleLaunchKernel = self._fn(["hipModuleLaunchKernel"],
                                              [p, u, u, u, u, u, u, u, p, ctypes.POINTER(p), p])
        self.hipMalloc = self._fn(["hipMalloc"], [ctypes.POINTER(c_void_p), sz])
        self.hipFree = self._fn(["hipFree"], [p])
        self.hipMemcpyHtoD = self._fn(["hipMemcpyHtoD"], [p, p, sz])
        self.hipMemcpyDtoH = self._fn(["hipMemcpyDtoH"], [p, p, sz])

    def error_text(self, code: int) -> Tuple[str, str]:
        name = self.lib.hipGetErrorName(code) or b"hipErrorUnknown"
        text = self.lib.hipGetErrorString(code) or b"unknown error"
        return name.decode(errors="replace"), text.decode(errors="replace")

    def open_device(self, device: int) -> Any:
        count = c_int()
        self.check(self.hipGetDeviceCount(byref(count)), "hipGetDeviceCount")
        if not 0 <= device < count.value:
            raise DriverUnavailableError(f"hipacm: device {device} asked for, but the HIP runtime "
                                         f"reports {count.value} device(s)",
                                         Status.BACKEND_UNAVAILABLE)
        return device

    def close_device(self, token: Any) -> None:
        pass

    def enter(self, token: Any) -> Any:
        previous = c_int()
        self.check(self.hipGetDevice(byref(previous)), "hipGetDevice")
        self.check(self.hipSetDevice(token), f"hipSetDevice({token})")
        return previous.value

    def leave(self, token: Any, saved: Any) -> None:
        self.hipSetDevice(saved)

    def load(self, code: Any) -> int:
        module = c_void_p()
        self.check(self.hipModuleLoadData(byref(module), code), "hipModuleLoadData")
        return module.value or 0

    def unload(self, module: int) -> None:
        self.hipModuleUnload(module)

    def get_function(self, module: int, name: bytes) -> int:
        function = c_void_p()
        self.check(self.hipModuleGetFunction(byref(function), module, name),
                   f"hipModuleGetFunction({name.decode(errors='replace')!r})")
        return function.value or 0

    def param_sizes(self, function: int) -> Optional[Tuple[int, ...]]:
        return None  # the HIP module API does not say

    def launch(self, function: int, grid: Tuple[int, int, int], block: Tuple[int, int, int],
               shared_mem: int, stream: int, params: Any) -> None:
        self.check(self.hipModuleLaunchKernel(function, *grid, *block, shared_mem, stream, params,
                                              None), "hipModuleLaunchKernel")

    def synchronize(self) -> None:
        self.check(self.hipDeviceSynchronize(), "hipDeviceSynchronize")

    def alloc(self, nbytes: int) -> int:
        ptr = c_void_p()
        self.check(self.hipMalloc(byref(ptr), nbytes), f"hipMalloc({nbytes})")
        return ptr.value or 0

    def free(self, ptr: int) -> None:
        self.hipFree(ptr)

    def htod(self, dst: int, src: int, nbytes: int) -> None:
        self.check(self.hipMemcpyHtoD(dst, src, nbytes), "hipMemcpyHtoD")

    def dtoh(self, dst: int, src: int, nbytes: int) -> None:
        self.check(self.hipMemcpyDtoH(dst, src, nbytes), "hipMemcpyDtoH")


# One driver object per platform and process, made on first use; tests may put a fake here.
_drivers: Dict[str, Any] = {}
_drivers_lock = threading.Lock()


def _driver(platform: str) -> Any:
    with _drivers_lock:
        driver = _drivers.get(platform)
        if driver is None:
            cls = _CudaDriver if platform == "cuda" else _HipDriver
            driver = cls(_open_library(platform))
            _drivers[platform] = driver
        return driver
