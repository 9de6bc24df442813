# SPDX-License-Identifier: MIT
"""Loading a compiled Kernel onto a GPU and launching its functions, through the HIP module API
(libamdhip64) for AMD code objects or the CUDA driver API (libcuda.so.1) for NVIDIA ones."""

from __future__ import annotations

import atexit
import ctypes
import operator
import os
import struct
import threading
import weakref
from ctypes import byref, c_int, c_size_t, c_uint, c_void_p
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ._core import Kernel
from ._errors import BackendUnavailableError, HipacmError, Status

__all__ = ["DeviceBuffer", "DriverError", "DriverUnavailableError", "Function", "Module",
           "Pointer", "platform_of"]

PLATFORMS = ("cuda", "hip")
_POINTER_SIZE = 8
_UINT_MAX = 0xFFFFFFFF

# Finalizers never call a driver once the interpreter is exiting: the driver's own teardown may
# already be under way, and the process's end frees every module anyway.
_exiting = False


def _mark_exiting() -> None:
    global _exiting
    _exiting = True


atexit.register(_mark_exiting)


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


# -- the argument rules


class Pointer:
    """A device address given as a plain int: ``Pointer(addr)`` is passed as 8 bytes.

    A bare Python int is never taken as a pointer (nor as any other value): it has no width.
    """

    __slots__ = ("address",)

    def __init__(self, address: Any) -> None:
        value = _index(address, "a Pointer's address")
        if not 0 <= value < 1 << 64:
            raise ValueError(f"hipacm: a device address must fit in 64 bits, not {value:#x}")
        self.address = value

    def __int__(self) -> int:
        return self.address

    def __repr__(self) -> str:
        return f"hipacm.Pointer({self.address:#x})"


def _index(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"hipacm: {what} must be an int, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"hipacm: {what} must be an int, not {type(value).__name__}") from None


def _numpy() -> Any:
    """numpy if it is already imported (a numpy value can only exist then); never imports it."""
    import sys
    return sys.modules.get("numpy")


def _device_address(arg: Any) -> Optional[int]:
    """The device address of a pointer-like argument, or None when ``arg`` is not one."""
    if isinstance(arg, Pointer):
        return arg.address
    if isinstance(arg, DeviceBuffer):
        return arg.ptr
    if isinstance(arg, ctypes.c_void_p):
        return arg.value or 0
    interface = getattr(type(arg), "__cuda_array_interface__", None)
    if interface is not None:
        data = arg.__cuda_array_interface__.get("data")
        if not isinstance(data, tuple) or not data:
            raise TypeError("hipacm: __cuda_array_interface__ has no 'data' tuple")
        return _index(data[0], "__cuda_array_interface__['data'][0]")
    data = getattr(arg, "data", None)
    ptr = getattr(data, "ptr", None) if data is not None else None
    if ptr is not None and not isinstance(data, memoryview):
        return _index(ptr, "data.ptr")
    return None


_REFUSED_INT = ("a Python {kind} has no width in C: pass ctypes.c_int32(v), ctypes.c_uint64(v), "
                "numpy.int32(v) and so on for a value, hipacm.Pointer(v) for a device address, or "
                "declare the parameter types with get_function(name, arg_types=...)")


def _simple_kind(ctype: Any) -> str:
    """'f' for a floating type, 'b' for c_bool, 'p' for c_void_p, 'i' for an integer type."""
    code = getattr(ctype, "_type_", "")
    if code in ("f", "d", "g"):
        return "f"
    if code == "?":
        return "b"
    if code == "P":
        return "p"
    if isinstance(code, str) and code in "bBhHiIlLqQ":
        return "i"
    return "?"


def _numpy_kind(dtype: Any) -> str:
    return {"f": "f", "b": "b", "i": "i", "u": "i"}.get(dtype.kind, "?")


def _value_bytes(arg: Any, index: int) -> Tuple[bytes, int]:
    """(bytes, alignment) of an argument with no declared type: only values that carry a width."""
    where = f"hipacm: kernel argument {index}"
    np = _numpy()
    # Before int and float: numpy.float64 is a float, and a numpy scalar carries its width.
    if np is not None and isinstance(arg, np.generic):
        if arg.dtype.hasobject or arg.dtype.kind in "USV":
            raise TypeError(f"{where}: a numpy {arg.dtype.name} scalar is not a C value")
        return arg.tobytes(), arg.dtype.alignment
    if isinstance(arg, bool):
        raise TypeError(f"{where}: " + _REFUSED_INT.format(kind="bool"))
    if isinstance(arg, int):
        raise TypeError(f"{where}: " + _REFUSED_INT.format(kind="int"))
    if isinstance(arg, float):
        raise TypeError(f"{where}: a Python float has no width in C: pass ctypes.c_float(v) or "
                        "ctypes.c_double(v), numpy.float32(v), or declare the parameter types "
                        "with get_function(name, arg_types=...)")
    if np is not None and isinstance(arg, np.ndarray):
        raise TypeError(f"{where}: a numpy array is host memory; pass a device array (CuPy, "
                        "hipacm.DeviceBuffer) or, for a scalar, a numpy scalar such as "
                        "numpy.float32(v)")
    address = _device_address(arg)
    if address is not None:
        return struct.pack("<Q", address), _POINTER_SIZE
    if isinstance(arg, (ctypes.c_char_p, ctypes.c_wchar_p)):
        raise TypeError(f"{where}: {type(arg).__name__} points to host memory")
    if isinstance(arg, ctypes._Pointer):
        raise TypeError(f"{where}: a ctypes pointer points to host memory; pass hipacm.Pointer "
                        "or ctypes.c_void_p for a device address")
    if isinstance(arg, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        return ctypes.string_at(ctypes.addressof(arg), ctypes.sizeof(arg)), ctypes.alignment(arg)
    raise TypeError(f"{where}: cannot pass a {type(arg).__name__}: give a ctypes value, a numpy "
                    "scalar, a device array (__cuda_array_interface__ or data.ptr), a "
                    "hipacm.DeviceBuffer or a hipacm.Pointer")


def _declared_bytes(arg: Any, declared: Any, index: int) -> Tuple[bytes, int]:
    """(bytes, alignment) of an argument whose parameter type the caller declared."""
    where = f"hipacm: kernel argument {index}"
    if declared is Pointer or declared is ctypes.c_void_p:
        address = _device_address(arg)
        if address is None:
            if isinstance(arg, (bool, float, ctypes._SimpleCData)) or not hasattr(arg, "__index__"):
                raise TypeError(f"{where} is declared a pointer, but a {type(arg).__name__} is "
                                "not a device address")
            address = Pointer(arg).address
        return struct.pack("<Q", address), _POINTER_SIZE
    if isinstance(declared, type) and issubclass(declared, (ctypes.Structure, ctypes.Union,
                                                            ctypes.Array)):
        if type(arg) is not declared:
            raise TypeError(f"{where} is declared {declared.__name__}, not "
                            f"{type(arg).__name__}")
        return _value_bytes(arg, index)
    if not (isinstance(declared, type) and issubclass(declared, ctypes._SimpleCData)) or \
            _simple_kind(declared) in ("?", "p"):
        raise TypeError(f"hipacm: arg_types[{index}] must be hipacm.Pointer, a ctypes number "
                        f"type or a ctypes Structure, not {declared!r}")
    kind, size = _simple_kind(declared), ctypes.sizeof(declared)
    np = _numpy()
    if isinstance(arg, ctypes._SimpleCData) or (np is not None and isinstance(arg, np.generic)):
        if isinstance(arg, ctypes._SimpleCData):
            given_kind, given_size, name = _simple_kind(type(arg)), ctypes.sizeof(arg), \
                type(arg).__name__
        else:
            given_kind, given_size, name = _numpy_kind(arg.dtype), arg.dtype.itemsize, \
                f"numpy.{arg.dtype.name}"
        if given_kind != kind or given_size != size:
            raise TypeError(f"{where} is declared {declared.__name__} ({size} bytes), but a "
                            f"{name} ({given_size} bytes) was given")
        return _value_bytes(arg, index)
    if isinstance(arg, bool):
        if kind != "b":
            raise TypeError(f"{where} is declared {declared.__name__}; a bool is only taken "
                            "for ctypes.c_bool")
        return _value_bytes(declared(arg), index)
    if isinstance(arg, int):
        if kind == "i":
            value = declared(arg)
            if value.value != arg:
                raise OverflowError(f"{where}: {arg} does not fit in {declared.__name__}")
            return _value_bytes(value, index)
        if kind == "f":
            return _value_bytes(declared(float(arg)), index)
    if isinstance(arg, float) and kind == "f":
        return _value_bytes(declared(arg), index)
    raise TypeError(f"{where} is declared {declared.__name__}; a {type(arg).__name__} is not "
                    "taken for it")


class PackedArguments:
    """Kernel arguments laid out as C lays out the parameter list: each at the next multiple of
    its alignment. ``pointers`` is the ``void**`` that cuLaunchKernel and hipModuleLaunchKernel
    read (one pointer to each value)."""

    def __init__(self, values: Sequence[Tuple[bytes, int]]) -> None:
        offsets: List[int] = []
        end = 0
        for data, alignment in values:
            offset = -(-end // alignment) * alignment
            offsets.append(offset)
            end = offset + len(data)
        self.offsets: Tuple[int, ...] = tuple(offsets)
        self.sizes: Tuple[int, ...] = tuple(len(data) for data, _ in values)
        self.alignments: Tuple[int, ...] = tuple(alignment for _, alignment in values)
        # 8-byte words: the host copy is aligned for every scalar type.
        self._storage = (ctypes.c_uint64 * (-(-end // 8) or 1))()
        base = ctypes.addressof(self._storage)
        for (data, _), offset in zip(values, offsets):
            ctypes.memmove(base + offset, data, len(data))
        self.pointers = (c_void_p * len(values))(*(base + offset for offset in offsets))

    @property
    def data(self) -> bytes:
        """The packed bytes (the parameter buffer)."""
        end = self.offsets[-1] + self.sizes[-1] if self.offsets else 0
        return ctypes.string_at(ctypes.addressof(self._storage), end)

    def check_sizes(self, kernel_sizes: Optional[Sequence[int]], name: str) -> None:
        """Refuses a count or width that differs from the kernel's own (where the driver said)."""
        if kernel_sizes is None:
            return
        if len(kernel_sizes) != len(self.sizes):
            raise TypeError(f"hipacm: {name} takes {len(kernel_sizes)} arguments, "
                            f"{len(self.sizes)} given")
        for i, (want, got) in enumerate(zip(kernel_sizes, self.sizes)):
            if want != got:
                raise TypeError(f"hipacm: kernel argument {i} of {name} is {want} bytes wide, "
                                f"but the value given is {got} bytes")


def pack_arguments(args: Sequence[Any], arg_types: Optional[Sequence[Any]] = None) -> PackedArguments:
    """Packs ``args`` by the rules of :meth:`Function.__call__`."""
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"hipacm: args must be a tuple or list, not {type(args).__name__}")
    if arg_types is None:
        return PackedArguments([_value_bytes(a, i) for i, a in enumerate(args)])
    if len(arg_types) != len(args):
        raise TypeError(f"hipacm: {len(arg_types)} arg_types declared, {len(args)} args given")
    return PackedArguments([_declared_bytes(a, t, i) for i, (a, t) in
                            enumerate(zip(args, arg_types))])


def _dims(value: Any, what: str) -> Tuple[int, int, int]:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(items) <= 3:
        raise ValueError(f"hipacm: {what} must have 1 to 3 dimensions, not {len(items)}")
    dims = [_index(v, what) for v in items] + [1] * (3 - len(items))
    for v in dims:
        if not 1 <= v <= _UINT_MAX:
            raise ValueError(f"hipacm: each dimension of {what} must be from 1 to {_UINT_MAX}, "
                             f"not {v}")
    return dims[0], dims[1], dims[2]


def _stream_handle(stream: Any) -> int:
    """None: the default stream. An int handle, an object with __cuda_stream__ (a (version,
    handle) pair) or with an int ``ptr`` (CuPy's Stream)."""
    if stream is None:
        return 0
    ptr = getattr(stream, "ptr", None)
    if isinstance(stream, int) and not isinstance(stream, bool):
        handle = stream
    elif hasattr(stream, "__cuda_stream__"):
        pair = stream.__cuda_stream__()
        handle = _index(pair[1], "__cuda_stream__()[1]")
    elif isinstance(ptr, int):
        handle = ptr
    else:
        raise TypeError(f"hipacm: stream must be None, an int handle or a stream object "
                        f"(__cuda_stream__ or .ptr), not {type(stream).__name__}")
    if not 0 <= handle < 1 << 64:
        raise ValueError(f"hipacm: stream handle {handle} is out of range")
    return handle


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


# -- devices, modules, functions, buffers


class _Device:
    """A driver, a device index, and the retained context (CUDA's primary one); released when the
    last Module or DeviceBuffer that uses it goes."""

    def __init__(self, driver: Any, device: int) -> None:
        self.driver = driver
        self.device = device
        self.token = driver.open_device(device)
        self.lock = threading.RLock()
        self._finalizer = weakref.finalize(self, _release_device, driver, self.token, os.getpid())
        self._finalizer.atexit = False

    def current(self) -> "_Current":
        return _Current(self)


def _release_device(driver: Any, token: Any, pid: int) -> None:
    if not _exiting and os.getpid() == pid:
        driver.close_device(token)


class _Current:
    """The device's context made current for one block, the caller's put back afterwards."""

    def __init__(self, device: _Device) -> None:
        self.device = device

    def __enter__(self) -> None:
        self.device.lock.acquire()
        try:
            self.saved = self.device.driver.enter(self.device.token)
        except BaseException:
            self.device.lock.release()
            raise

    def __exit__(self, *exc: Any) -> None:
        try:
            self.device.driver.leave(self.device.token, self.saved)
        finally:
            self.device.lock.release()


class _Owned:
    """A driver handle released by ``release(handle)`` with the device current: once, by close(),
    by garbage collection, never at interpreter exit or in a forked child."""

    def __init__(self, device: _Device, handle: int, release: str) -> None:
        self.device = device
        self.handle: Optional[int] = handle
        self.release = release
        self.pid = os.getpid()

    def __call__(self) -> None:
        with self.device.lock:
            handle, self.handle = self.handle, None
        if handle is None or _exiting or os.getpid() != self.pid:
            return
        with self.device.current():
            getattr(self.device.driver, self.release)(handle)


def _open_device(platform: str, device: Any) -> _Device:
    index = _index(device, "device")
    if index < 0:
        raise ValueError(f"hipacm: device must be 0 or more, not {index}")
    return _Device(_driver(platform), index)


class Module:
    """A code object loaded onto a device, from which functions are taken.

    ``Module(kernel)`` loads ``kernel.code`` (a :class:`Kernel` from a compile) through the HIP
    module API for ``gfx*`` code objects or the CUDA driver API (the device's primary context)
    for ``sm_*`` cubins and ``compute_*`` PTX. Raw code bytes need ``platform=`` unless the bytes
    tell (an ELF's machine, a fatbin, PTX text).

    The module is unloaded by :meth:`close`, on leaving a ``with`` block, or when the Module and
    every :class:`Function` taken from it are garbage collected; never at interpreter exit
    (the process's end frees it) nor in a forked child.

    Raises:
        DriverUnavailableError: No driver library, no device, or no device ``device``.
        DriverError: The driver refused the code object (e.g. another arch's).
        ValueError: The platform cannot be told, or the arch and bytes disagree.
    """

    def __init__(self, kernel: Union[Kernel, bytes, bytearray, memoryview], *, device: int = 0,
                 platform: Optional[str] = None) -> None:
        self.kernel: Optional[Kernel] = kernel if isinstance(kernel, Kernel) else None
        code = kernel.code if isinstance(kernel, Kernel) else bytes(kernel)
        if platform is not None and platform not in PLATFORMS:
            raise ValueError(f"hipacm: platform must be one of {PLATFORMS}, not {platform!r}")
        if platform is None:
            found = platform_of(kernel)
        else:
            told = {_platform_of_code(code)}
            if self.kernel is not None:
                told.add(_platform_of_arch(self.kernel.arch))
            told.discard(None)
            if told and told != {platform}:
                raise ValueError(f"hipacm: platform={platform!r}, but the code object is for "
                                 f"{'/'.join(sorted(str(t) for t in told))}")
            found = platform
        if not code:
            raise ValueError("hipacm: the code object is empty")
        self.platform: str = found
        self._device = _open_device(found, device)
        self.device: int = self._device.device
        # PTX is read as a C string: the copy gets a terminating NUL.
        self._code = ctypes.create_string_buffer(code, len(code) + 1)
        with self._device.current():
            handle = self._device.driver.load(self._code)
        self._owned = _Owned(self._device, handle, "unload")
        self._finalizer = weakref.finalize(self, self._owned)
        self._finalizer.atexit = False
        self._functions: Dict[str, Function] = {}

    @property
    def handle(self) -> int:
        """The ``hipModule_t``/``CUmodule`` as an int (0 once closed)."""
        return self._owned.handle or 0

    @property
    def closed(self) -> bool:
        return self._owned.handle is None

    def _live_handle(self) -> int:
        handle = self._owned.handle
        if handle is None:
            raise ValueError("hipacm: this Module is closed")
        return handle

    def get_function(self, name: str, *, arg_types: Optional[Sequence[Any]] = None) -> "Function":
        """The kernel ``name``: a function name, or a name expression the kernel was compiled
        with (``"scale<float>"``), which is looked up by its lowered name.

        Args:
            arg_types: Optional parameter types, one per kernel parameter: ``hipacm.Pointer``
                (or ``ctypes.c_void_p``) for a pointer, a ctypes number type, or a ctypes
                Structure type. With them, plain Python ints and floats are taken and converted
                (a value that does not fit raises OverflowError).

        Raises:
            DriverError: No such function (the message lists the kernel's functions).
        """
        if not isinstance(name, str):
            raise TypeError(f"hipacm: name must be a str, not {type(name).__name__}")
        lowered = self.kernel.lowered_names.get(name, name) if self.kernel is not None else name
        with self._device.current():
            try:
                handle = self._device.driver.get_function(self._live_handle(), lowered.encode())
            except DriverError as error:
                if error.code != self._device.driver.not_found or self.kernel is None:
                    raise
                known = list(self.kernel.function_names) + list(self.kernel.lowered_names)
                raise DriverError(f"{error.message}; this kernel has {known}", error.status,
                                  error.platform, error.call, error.code, error.name) from None
            sizes = self._device.driver.param_sizes(handle)
        types = None if arg_types is None else tuple(arg_types)
        return Function(self, name, lowered, handle, sizes, types)

    def alloc(self, nbytes: int) -> "DeviceBuffer":
        """``nbytes`` of device memory on this module's device (see :class:`DeviceBuffer`)."""
        return DeviceBuffer(self._device, nbytes)

    def synchronize(self) -> None:
        """Waits for all work on the device (cuCtxSynchronize / hipDeviceSynchronize)."""
        with self._device.current():
            self._device.driver.synchronize()

    def close(self) -> None:
        """Unloads the module; Functions taken from it then refuse to launch. Idempotent."""
        self._finalizer()

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"handle=0x{self.handle:x}"
        return f"<hipacm.Module {self.platform} device={self.device} {state}>"


class Function:
    """A kernel of a :class:`Module`; calling it launches it. Keeps its Module alive.

    ``fn(grid, block, args, shared_mem=0, stream=None)``:

    - ``grid``, ``block``: an int or a tuple of 1 to 3 ints (missing dimensions are 1).
    - ``args``: a tuple or list, one entry per kernel parameter, each of which must say its own
      width: a ctypes value (``c_int32(n)``, ``c_float(x)``, ``c_void_p(p)``, a Structure), a
      numpy scalar (``numpy.int32(n)``), or a device pointer: an object with
      ``__cuda_array_interface__`` (CuPy, PyTorch, Numba), one with an int ``data.ptr``, a
      :class:`DeviceBuffer`, or ``hipacm.Pointer(address)``. A plain Python int, float or bool
      is refused (it has no width), as are host memory (numpy arrays, ctypes pointers, bytes)
      and anything else. With ``arg_types`` from :meth:`Module.get_function`, plain ints and
      floats are converted to the declared types instead, and a value of another width is
      refused.
    - On CUDA drivers that report parameter sizes (``cuFuncGetParamInfo``, CUDA 12.4 and
      later), the argument count and every width are also checked against the kernel's own
      before the launch (:attr:`param_sizes`). HIP's module API reports nothing: there the
      widths are the caller's.
    - ``shared_mem``: bytes of dynamic shared memory. ``stream``: None (the default stream), an
      int handle, or a stream object with ``__cuda_stream__`` or an int ``ptr`` (CuPy's).

    The launch is asynchronous, as the driver's is.
    """

    def __init__(self, module: Module, name: str, lowered_name: str, handle: int,
                 param_sizes: Optional[Tuple[int, ...]], arg_types: Optional[Tuple[Any, ...]]
                 ) -> None:
        self.module = module
        self.name = name
        self.lowered_name = lowered_name
        self.handle = handle
        #: The width of each parameter as the driver reports it, or None where it does not.
        self.param_sizes = param_sizes
        self.arg_types = arg_types

    def pack(self, args: Sequence[Any]) -> PackedArguments:
        """The arguments as they would be launched (checked against :attr:`param_sizes`)."""
        packed = pack_arguments(args, self.arg_types)
        packed.check_sizes(self.param_sizes, repr(self.name))
        return packed

    def __call__(self, grid: Any, block: Any, args: Sequence[Any] = (), *, shared_mem: int = 0,
                 stream: Any = None) -> None:
        grid3, block3 = _dims(grid, "grid"), _dims(block, "block")
        shared = _index(shared_mem, "shared_mem")
        if not 0 <= shared <= _UINT_MAX:
            raise ValueError(f"hipacm: shared_mem must be from 0 to {_UINT_MAX}, not {shared}")
        handle = _stream_handle(stream)
        packed = self.pack(args)
        device = self.module._device
        with device.current():
            self.module._live_handle()
            device.driver.launch(self.handle, grid3, block3, shared, handle,
                                 packed.pointers if packed.sizes else None)

    def __repr__(self) -> str:
        lowered = "" if self.lowered_name == self.name else f" lowered={self.lowered_name!r}"
        return f"<hipacm.Function {self.name!r}{lowered} of {self.module!r}>"


class DeviceBuffer:
    """Plain device memory (cuMemAlloc / hipMalloc) on a Module's device, for callers without
    CuPy: passed to a kernel as its address. Freed by :meth:`free`, a ``with`` block, or
    garbage collection (not at interpreter exit)."""

    def __init__(self, device: _Device, nbytes: int) -> None:
        size = _index(nbytes, "nbytes")
        if size <= 0:
            raise ValueError(f"hipacm: nbytes must be at least 1, not {size}")
        self.nbytes = size
        self._device = device
        with device.current():
            ptr = device.driver.alloc(size)
        self._owned = _Owned(device, ptr, "free")
        self._finalizer = weakref.finalize(self, self._owned)
        self._finalizer.atexit = False

    @property
    def ptr(self) -> int:
        ptr = self._owned.handle
        if ptr is None:
            raise ValueError("hipacm: this DeviceBuffer is freed")
        return ptr

    def copy_from_host(self, data: Any) -> None:
        """Copies a C-contiguous bytes-like object (bytes, array.array, a numpy array) to the
        start of the buffer; it must not be larger than the buffer. Synchronous."""
        view = memoryview(data)
        if not view.c_contiguous:
            raise ValueError("hipacm: copy_from_host needs C-contiguous data")
        view = view.cast("B")
        if view.nbytes > self.nbytes:
            raise ValueError(f"hipacm: {view.nbytes} bytes do not fit in a {self.nbytes}-byte "
                             "buffer")
        host = (ctypes.c_char * max(view.nbytes, 1)).from_buffer_copy(view) if view.nbytes \
            else None
        if host is None:
            return
        with self._device.current():
            self._device.driver.htod(self.ptr, ctypes.addressof(host), view.nbytes)

    def copy_to_host(self, out: Any = None) -> Any:
        """Copies the buffer (or ``len(out)`` bytes of it) into ``out`` (a writable C-contiguous
        bytes-like object), or into a new bytearray that is returned. Synchronous: it waits for
        work on the default stream first."""
        target = bytearray(self.nbytes) if out is None else out
        view = memoryview(target)
        if view.readonly or not view.c_contiguous:
            raise ValueError("hipacm: copy_to_host needs a writable C-contiguous buffer")
        view = view.cast("B")
        if view.nbytes > self.nbytes:
            raise ValueError(f"hipacm: the buffer holds {self.nbytes} bytes, "
                             f"{view.nbytes} asked for")
        if view.nbytes:
            host = (ctypes.c_char * view.nbytes).from_buffer(view)
            with self._device.current():
                self._device.driver.dtoh(ctypes.addressof(host), self.ptr, view.nbytes)
            del host
        view.release()
        return target

    def free(self) -> None:
        """Frees the memory. Idempotent."""
        self._finalizer()

    def __enter__(self) -> "DeviceBuffer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "freed" if self._owned.handle is None else f"ptr=0x{self._owned.handle:x}"
        return f"<hipacm.DeviceBuffer {self.nbytes} bytes {state}>"
