# SPDX-License-Identifier: MIT
"""The kernel argument rules of the launch helper: each value carries its width (ctypes
values, numpy scalars, device pointers; plain numbers only as declared), packed as C lays out
the parameter list; and the grid, block and stream a launch takes."""

from __future__ import annotations

import ctypes
import operator
import struct
from ctypes import c_void_p
from typing import Any, List, Optional, Sequence, Tuple

_POINTER_SIZE = 8
_UINT_MAX = 0xFFFFFFFF


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
    # Imported here: _launch, which defines DeviceBuffer, imports this module.
    from ._launch import DeviceBuffer

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
