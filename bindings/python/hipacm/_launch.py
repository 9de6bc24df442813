# SPDX-License-Identifier: MIT
"""Loading a compiled Kernel onto a GPU and launching its functions: Module, Function and
DeviceBuffer, over the drivers of _gpu_drivers with the argument rules of _launch_args."""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
import weakref
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from ._core import Kernel
from ._gpu_drivers import (PLATFORMS, DriverError, DriverUnavailableError, _driver,
                           _platform_of_arch, _platform_of_code, platform_of)
from ._launch_args import (_UINT_MAX, PackedArguments, Pointer, _dims, _index, _stream_handle,
                           pack_arguments)

__all__ = ["DeviceBuffer", "DriverError", "DriverUnavailableError", "Function", "Module",
           "Pointer", "platform_of"]

# Finalizers never call a driver once the interpreter is exiting: the driver's own teardown may
# already be under way, and the process's end frees every module anyway.
_exiting = False


def _mark_exiting() -> None:
    global _exiting
    _exiting = True


atexit.register(_mark_exiting)


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
