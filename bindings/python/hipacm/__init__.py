# SPDX-License-Identifier: MIT
"""Python bindings for hipacm, the asynchronous HIP kernel-compile plugin.

The API mirrors Triton's ``triton.runtime._async_compile``::

    import hipacm

    with hipacm.AsyncCompileMode(arch="gfx90a") as mode:
        future = mode.submit("vadd", SOURCE, finalize=lambda kernel: ...)
    kernel = future.result()          # a hipacm.Kernel; kernel.code is an AMDGPU ELF

The bindings are pure Python (ctypes). Importing the package loads
``libhipacm.so.1`` from ``$HIPACM_LIBRARY``, from beside the package, or
through the system loader (never from directories above the package), and raises
:class:`ImportError` when none is found or its ABI does not match. The
plugin's log events (ABI 1.4) go to ``logging.getLogger("hipacm")``.
"""

from ._errors import (
    AbiMismatchError,
    BackendUnavailableError,
    CompilationError,
    CompilationErrorGroup,
    HipacmError,
    InternalError,
    InvalidArgumentError,
    ModeAlreadyActiveError,
    ModeClosedError,
    OutOfMemoryError,
    Status,
)
from ._core import (
    BackendInfo,
    Kernel,
    Stats,
    backend_info,
    compile,
    library_path,
    plugin_version,
    stats,
    status_string,
)
from ._future import FutureKernel
from ._launch import (DeviceBuffer, DriverError, DriverUnavailableError, Function, Module,
                      Pointer, platform_of)
from ._mode import AsyncCompileMode, active_mode
from ._ffi import ABI_VERSION_MAJOR, ABI_VERSION_MINOR
from ._logging import set_log_level

__version__ = "0.1.0"

__all__ = [
    "ABI_VERSION_MAJOR",
    "ABI_VERSION_MINOR",
    "AbiMismatchError",
    "AsyncCompileMode",
    "BackendInfo",
    "BackendUnavailableError",
    "CompilationError",
    "CompilationErrorGroup",
    "DeviceBuffer",
    "DriverError",
    "DriverUnavailableError",
    "Function",
    "FutureKernel",
    "HipacmError",
    "InternalError",
    "InvalidArgumentError",
    "Kernel",
    "ModeAlreadyActiveError",
    "ModeClosedError",
    "Module",
    "OutOfMemoryError",
    "Pointer",
    "Stats",
    "Status",
    "active_mode",
    "backend_info",
    "compile",
    "library_path",
    "platform_of",
    "plugin_version",
    "set_log_level",
    "stats",
    "status_string",
]
