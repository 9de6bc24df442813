# SPDX-License-Identifier: MIT
"""hipacm.Function's argument rules, with no GPU: what is packed (bytes, offsets, widths), what is
refused (values with no width, host memory, a width other than the declared or the kernel's)."""

from __future__ import annotations

import ctypes
import struct

import pytest

import hipacm
from hipacm import _launch
from hipacm._launch import _dims, _stream_handle, pack_arguments

try:  # numpy is optional for the package; the numpy tests skip without it
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy (python3-numpy) is not installed")


class FakeCupyArray:
    """What CuPy's ndarray offers: __cuda_array_interface__ with the device address."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": (4,), "typestr": "<f4", "data": (self.ptr, False), "version": 3}


class FakeMemoryPointer:
    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


class FakeDataPtr:
    """An array whose .data is a memory pointer with an int .ptr (CuPy's ndarray.data)."""

    def __init__(self, ptr: int) -> None:
        self.data = FakeMemoryPointer(ptr)


def test_ctypes_values_pack_at_c_offsets():
    packed = pack_arguments([ctypes.c_int8(-1), ctypes.c_double(2.5), ctypes.c_int32(7),
                             ctypes.c_int16(9), ctypes.c_void_p(0x1234)])
    assert packed.sizes == (1, 8, 4, 2, 8)
    assert packed.alignments == (1, 8, 4, 2, 8)
    assert packed.offsets == (0, 8, 16, 20, 24)
    data = packed.data
    assert len(data) == 32
    assert data[0:1] == b"\xff"
    assert struct.unpack_from("<d", data, 8)[0] == 2.5
    assert struct.unpack_from("<i", data, 16)[0] == 7
    assert struct.unpack_from("<h", data, 20)[0] == 9
    assert struct.unpack_from("<Q", data, 24)[0] == 0x1234
    # The void** handed to the driver points at each value in the buffer.
    for i, offset in enumerate(packed.offsets):
        assert packed.pointers[i] == ctypes.addressof(packed._storage) + offset


def test_structure_passed_by_value_with_its_alignment():
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int32), ("b", ctypes.c_double)]

    packed = pack_arguments([ctypes.c_int8(1), Pair(3, 4.0)])
    assert packed.sizes == (1, 16)
    assert packed.offsets == (0, 8)
    assert struct.unpack_from("<i4xd", packed.data, 8) == (3, 4.0)


def test_pointer_likes_are_eight_bytes_each():
    packed = pack_arguments([hipacm.Pointer(0xdead0000), FakeCupyArray(0xbeef0000),
                             FakeDataPtr(0xfeed0000), ctypes.c_void_p(None)])
    assert packed.sizes == (8, 8, 8, 8)
    assert struct.unpack("<4Q", packed.data) == (0xdead0000, 0xbeef0000, 0xfeed0000, 0)


@pytest.mark.parametrize("value, word", [(7, "int"), (True, "bool"), (2.5, "float")])
def test_plain_python_numbers_are_refused_without_declared_types(value, word):
    with pytest.raises(TypeError, match=f"kernel argument 1: a Python {word} has no width"):
        pack_arguments([hipacm.Pointer(16), value])


@pytest.mark.parametrize("value", [b"abc", ctypes.c_char_p(b"x"), ctypes.pointer(ctypes.c_int(1)),
                                   "text", object(), None])
def test_host_memory_and_unknown_objects_are_refused(value):
    with pytest.raises(TypeError, match="kernel argument 0"):
        pack_arguments([value])


def test_args_must_be_a_sequence():
    with pytest.raises(TypeError, match="args must be a tuple or list"):
        pack_arguments(ctypes.c_int(1))


def test_declared_types_take_plain_numbers_and_check_range():
    types = (hipacm.Pointer, ctypes.c_int32, ctypes.c_float, ctypes.c_uint64, ctypes.c_bool)
    packed = pack_arguments([0x1000, 5, 1, 2**64 - 1, True], types)
    assert packed.sizes == (8, 4, 4, 8, 1)
    assert packed.offsets == (0, 8, 12, 16, 24)
    assert struct.unpack_from("<QifQ?", packed.data) == (0x1000, 5, 1.0, 2**64 - 1, True)
    with pytest.raises(OverflowError, match="does not fit in c_int"):
        pack_arguments([0, 2**31], (hipacm.Pointer, ctypes.c_int32))
    with pytest.raises(OverflowError, match="does not fit"):
        pack_arguments([-1], (ctypes.c_uint32,))
    with pytest.raises(TypeError, match="declared c_int"):
        pack_arguments([1.5], (ctypes.c_int32,))
    with pytest.raises(TypeError, match="a bool is only taken for ctypes.c_bool"):
        pack_arguments([True], (ctypes.c_int32,))
    with pytest.raises(TypeError, match="is declared a pointer"):
        pack_arguments([1.0], (hipacm.Pointer,))
    with pytest.raises(TypeError, match="2 arg_types declared, 1 args given"):
        pack_arguments([1], (ctypes.c_int32, ctypes.c_int32))


def test_declared_type_refuses_a_value_of_another_width():
    with pytest.raises(TypeError, match=r"declared c_int \(4 bytes\), but a c_long \(8 bytes\)"):
        pack_arguments([ctypes.c_int64(3)], (ctypes.c_int32,))
    with pytest.raises(TypeError, match="declared c_double"):
        pack_arguments([ctypes.c_float(3)], (ctypes.c_double,))
    with pytest.raises(TypeError, match="declared c_float"):
        pack_arguments([ctypes.c_int32(3)], (ctypes.c_float,))
    # The same width and kind passes.
    assert pack_arguments([ctypes.c_uint32(3)], (ctypes.c_int32,)).sizes == (4,)


def test_bad_declared_type_is_refused():
    with pytest.raises(TypeError, match=r"arg_types\[0\] must be"):
        pack_arguments([1], (int,))


def test_widths_are_checked_against_the_kernels_own():
    packed = pack_arguments([hipacm.Pointer(1), ctypes.c_int32(2)])
    packed.check_sizes((8, 4), "'vadd'")
    packed.check_sizes(None, "'vadd'")  # a driver that does not say
    with pytest.raises(TypeError, match="argument 1 of 'vadd' is 8 bytes wide, but the value "
                                        "given is 4 bytes"):
        packed.check_sizes((8, 8), "'vadd'")
    with pytest.raises(TypeError, match="'vadd' takes 3 arguments, 2 given"):
        packed.check_sizes((8, 4, 4), "'vadd'")


@needs_numpy
def test_numpy_scalars_carry_their_width():
    packed = pack_arguments([np.int8(3), np.float64(0.5), np.int32(-2), np.float32(1.5),
                             np.uint64(2**63)])
    assert packed.sizes == (1, 8, 4, 4, 8)
    assert packed.offsets == (0, 8, 16, 20, 24)
    assert struct.unpack_from("<b7xdifQ", packed.data) == (3, 0.5, -2, 1.5, 2**63)


@needs_numpy
def test_numpy_arrays_are_host_memory_and_refused():
    with pytest.raises(TypeError, match="a numpy array is host memory"):
        pack_arguments([np.zeros(4, dtype=np.float32)])


@needs_numpy
def test_numpy_scalar_against_declared_types():
    assert pack_arguments([np.int32(4)], (ctypes.c_int32,)).sizes == (4,)
    with pytest.raises(TypeError, match=r"declared c_int \(4 bytes\), but a numpy.int64"):
        pack_arguments([np.int64(4)], (ctypes.c_int32,))
    with pytest.raises(TypeError, match="declared c_float"):
        pack_arguments([np.float64(4)], (ctypes.c_float,))


def test_grid_and_block_dimensions():
    assert _dims(4, "grid") == (4, 1, 1)
    assert _dims((4, 2), "grid") == (4, 2, 1)
    assert _dims([1, 2, 3], "block") == (1, 2, 3)
    for bad in (0, (1, 0), (1, 1, 1, 1), ()):
        with pytest.raises(ValueError):
            _dims(bad, "grid")
    for bad in (1.0, True, "2"):
        with pytest.raises(TypeError):
            _dims(bad, "grid")


def test_stream_handles():
    class CudaStream:
        def __cuda_stream__(self):
            return (0, 0x77)

    class CupyStream:
        ptr = 0x99

    assert _stream_handle(None) == 0
    assert _stream_handle(0x55) == 0x55
    assert _stream_handle(CudaStream()) == 0x77
    assert _stream_handle(CupyStream()) == 0x99
    with pytest.raises(TypeError):
        _stream_handle(1.0)
    with pytest.raises(ValueError):
        _stream_handle(-1)


def test_pointer_range():
    assert int(hipacm.Pointer(2**64 - 1)) == 2**64 - 1
    with pytest.raises(ValueError):
        hipacm.Pointer(2**64)
    with pytest.raises(TypeError):
        hipacm.Pointer(1.0)
    assert repr(_launch.Pointer(255)) == "hipacm.Pointer(0xff)"
