# SPDX-License-Identifier: MIT
"""The loaded plugin's function table, the Kernel copy, and the calls that need no mode."""

from __future__ import annotations

import ctypes
import weakref
from ctypes import POINTER, byref, c_void_p
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from . import _ffi, _logging
from ._errors import (AbiMismatchError, CompilationError, Status, _short_key, error_for,
                      to_status)
from ._request import _build_request, _encode, _str_list

_plugin = _ffi.load_plugin()


class _Api:
    """The provider's function pointers, read once (each is a CFUNCTYPE: the GIL
    is released during the call). An entry the plugin's table lacks is None."""

    def __init__(self, provider: Union[_ffi.Provider, _ffi.ProviderV2]) -> None:
        for name in _ffi.PROVIDER_V2_ENTRIES + _ffi.PROVIDER_V3_ENTRIES:
            setattr(self, name, getattr(provider, name, None))


_api: Any = _Api(_plugin.provider)
# Plugin log events go to logging.getLogger("hipacm"), not to fd 2.
_logging.install(_api.set_log_callback)

#: Path of the loaded ``libhipacm.so.1``.
library_path: str = _plugin.path
#: The plugin's release version (``hipacm_provider.version``).
plugin_version: str = _plugin.version


def _last_error() -> str:
    return _ffi.optional_str(_api.last_error_message())


def _require_abi(minor: int, supported: bool, what: str) -> None:
    """Raises AbiMismatchError for ``what`` when the loaded plugin predates ABI 1.``minor``."""
    if not supported:
        raise AbiMismatchError(
            f"hipacm: {what} needs a plugin of ABI 1.{minor} or newer; {library_path} provides "
            f"ABI {_plugin.abi_text}. Upgrade libhipacm.", Status.ABI_MISMATCH)


def _require_abi_1_5(what: str) -> None:
    """Raises AbiMismatchError when the loaded plugin predates ABI 1.5 (the remote cache)."""
    _require_abi(5, _plugin.has_abi_1_5, what)


def _require_abi_1_4(what: str) -> None:
    """Raises AbiMismatchError when the loaded plugin predates ABI 1.4."""
    _require_abi(4, _plugin.has_abi_1_4, what)


@dataclass(frozen=True, eq=False)
class Kernel:
    """A compiled kernel: a copy of the plugin's ``hipacm_kernel``.

    Attributes:
        key: The dedup key (``"sha256:..."`` when the plugin chose it).
        code: The code object; an AMDGPU ELF for gfx targets.
        log: The compiler log (may be empty).
        arch: The arch it was compiled for, e.g. ``"gfx90a"``.
        lowered_names: Name expression -> lowered (mangled) name, in request order.
        from_cache: True when the kernel came from the persistent cache (no
            compiler ran; ``compile_seconds`` is then the lookup's time).
        compile_seconds: Wall time of the compile step itself.
        function_names: Every kernel in the code object, sorted by name
            (empty from a plugin older than ABI 1.2).
        module: With ``load_device``, the loaded module as an int (a
            ``hipModule_t`` on AMD targets, a ``CUmodule`` on NVIDIA ones);
            otherwise None. Never unload it yourself.
        functions: The resolved function of each of ``function_names``, in that
            order, as ints when ``module`` is set; otherwise None entries.

    ``module`` and ``functions`` are the plugin's: they stay valid while this
    object is alive, because it then holds its own reference to the plugin's
    future, whose last release unloads the module.
    """

    key: str
    code: bytes = field(repr=False)
    log: str = field(repr=False)
    arch: str
    lowered_names: Dict[str, str]
    from_cache: bool
    compile_seconds: float
    function_names: Tuple[str, ...] = ()
    module: Optional[int] = None
    functions: Tuple[Optional[int], ...] = ()

    def __repr__(self) -> str:
        origin = ("from the cache" if self.from_cache
                  else f"compiled in {self.compile_seconds:.3f} s")
        loaded = "" if self.module is None else f" module=0x{self.module:x}"
        return (f"<hipacm.Kernel key={_short_key(self.key)!r} arch={self.arch!r} "
                f"code={len(self.code)} bytes functions={list(self.function_names)!r} "
                f"{origin}{loaded}>")


class _FutureReference:
    """One reference to a ``hipacm_future``, released once when this object is
    garbage collected: what keeps a loaded module alive for its Kernel."""

    __slots__ = ("handle", "__weakref__")

    def __init__(self, handle: int) -> None:
        status = _api.future_retain(handle)
        if status != Status.SUCCESS:
            raise error_for(status, _last_error())
        self.handle = handle
        weakref.finalize(self, _api.future_release, handle)

    # A copy of the Kernel shares this reference; another process cannot use it.
    def __copy__(self) -> "_FutureReference":
        return self

    def __deepcopy__(self, memo: Any) -> "_FutureReference":
        return self

    def __reduce__(self) -> Any:
        raise TypeError("hipacm: a Kernel with a loaded module cannot be pickled")


def _kernel_from_ptr(kp: Any, name_expressions: Sequence[str], handle: int) -> Kernel:
    """Copies the kernel that ``handle``'s future owns; a loaded one keeps the future."""
    k = kp.contents
    code = ctypes.string_at(k.code, k.code_size) if k.code and k.code_size else b""
    lowered = [_ffi.optional_str(k.lowered_names[i]) for i in range(k.num_lowered_names)]
    from_cache = False
    function_names: Tuple[str, ...] = ()
    module: Optional[int] = None
    functions: Tuple[Optional[int], ...] = ()
    # Fields past version 1 are read only where the plugin's struct_size covers them.
    v2 = _ffi.KernelWithCache.from_address(ctypes.addressof(k))
    if k.struct_size >= _ffi.KERNEL_FROM_CACHE_END:
        from_cache = bool(v2.from_cache)
    if k.struct_size >= ctypes.sizeof(_ffi.KernelWithCache):
        count = v2.num_functions if v2.function_names else 0
        function_names = tuple(_ffi.optional_str(v2.function_names[i]) for i in range(count))
        module = v2.module or None
        functions = (tuple(v2.functions[i] or None for i in range(count)) if v2.functions
                     else (None,) * count)
    kernel = Kernel(
        key=_ffi.optional_str(k.key),
        code=code,
        log=_ffi.optional_str(k.log),
        arch=_ffi.optional_str(k.arch),
        lowered_names=dict(zip(name_expressions, lowered)),
        from_cache=from_cache,
        compile_seconds=float(k.compile_seconds),
        function_names=function_names,
        module=module,
        functions=functions,
    )
    if module is not None:
        # Not a dataclass field, so fields(), asdict() and repr() show only
        # the copied values.
        object.__setattr__(kernel, "_future_reference", _FutureReference(handle))
    return kernel


def _error_from_handle(handle: int, status: int, key: str, message: Optional[str] = None) -> CompilationError:
    log = _ffi.optional_str(_api.future_log(handle))
    if message is None:
        message = _ffi.optional_str(_api.future_error_message(handle))
    return CompilationError(message, to_status(status), key, log)


def compile(source: str, *, arch: Optional[str] = None, key: Optional[str] = None,
            name: Optional[str] = None, options: Sequence[str] = (),
            headers: Optional[Mapping[str, str]] = None,
            name_expressions: Sequence[str] = ()) -> Kernel:
    """Compiles ``source`` synchronously on the calling thread, without a mode.

    Args:
        source: The HIP source.
        arch: Target arch; None means ``$HIPACM_ARCH``, otherwise the device's.
        key: The key reported in :attr:`Kernel.key`; None uses the content digest.
        name: The source's file name for diagnostics.
        options: hipRTC options.
        headers: Header name -> contents.
        name_expressions: Expressions whose lowered names are reported.

    Returns:
        The :class:`Kernel`.

    Raises:
        CompilationError: The compile failed.
        InvalidArgumentError, BackendUnavailableError: The request or arch was
            rejected, or no compiler could be loaded.
    """
    exprs = _str_list(name_expressions, "name_expressions")
    req, keep = _build_request(key, source, name, options, headers, exprs)
    arch_bytes = None if arch is None else _encode(arch, "arch")
    _logging.sync()
    out = c_void_p()
    status = _api.compile(byref(req), arch_bytes, byref(out))
    message = _last_error() if status != Status.SUCCESS else ""
    del keep
    handle = out.value
    if not handle:
        raise error_for(status, message)
    try:
        fkey = _ffi.optional_str(_api.future_key(handle))
        if status == Status.SUCCESS:
            kp = POINTER(_ffi.Kernel)()
            status = _api.future_result(handle, byref(kp))
            if status == Status.SUCCESS:
                return _kernel_from_ptr(kp, exprs, handle)
        raise _error_from_handle(handle, status, fkey)
    finally:
        _api.future_release(handle)


@dataclass(frozen=True)
class BackendInfo:
    """What the plugin's backend found (``hipacm_backend_info``).

    Attributes:
        available: True when the compiler (hipRTC) could be loaded.
        compiler: The compiler's name, e.g. ``"hiprtc"``.
        version: Its version ("" when unavailable).
        library_path: The compiler library that was loaded.
        default_arch: ``$HIPACM_ARCH`` or the device's arch; "" if none.
    """

    available: bool
    compiler: str
    version: str
    library_path: str
    default_arch: str


def backend_info() -> BackendInfo:
    """Reports which compiler the plugin found. Never raises for a missing compiler.

    Returns:
        A :class:`BackendInfo`; ``available`` is False when hipRTC cannot be loaded.
    """
    info = _ffi.BackendInfo()
    info.struct_size = ctypes.sizeof(info)
    status = _api.get_backend_info(byref(info))
    if status not in (Status.SUCCESS, Status.BACKEND_UNAVAILABLE):
        raise error_for(status, _last_error())
    return BackendInfo(
        available=bool(info.available),
        compiler=_ffi.optional_str(info.compiler),
        version=_ffi.optional_str(info.version),
        library_path=_ffi.optional_str(info.library_path),
        default_arch=_ffi.optional_str(info.default_arch),
    )


def status_string(status: int) -> str:
    """The plugin's fixed name of ``status``, e.g. ``"HIPACM_ERROR_COMPILATION"``."""
    return _ffi.optional_str(_api.status_string(int(status)))


@dataclass(frozen=True)
class Stats:
    """The plugin's process-wide counters since it was loaded (``hipacm_stats``).

    Each is monotonic: read them twice and subtract to measure an interval.

    Attributes:
        compiles: Compiler runs started (in-process or in a worker).
        compile_failures: Compiler runs that ended ``Status.COMPILATION``.
        cache_hits: Requests served from the persistent cache.
        cache_misses: Cache lookups that found nothing usable.
        cache_stores: Code objects written to the cache.
        bytes_stored: Code object bytes written to the cache.
        cache_evictions: Entries removed to keep the cache in its bound.
        bytes_evicted: Code object bytes those entries held.
        worker_spawns: ``hipacm-worker`` processes started.
        worker_crashes: Workers that died during a compile.
        timeouts: Compiles killed at the mode's ``timeout``.
        cached_failures: Requests failed at once from a stored failure
            (``cache_failures=True``).
        remote_hits: Local cache misses served from the remote cache
            (``remote_cache=``, ``$HIPACM_REMOTE_CACHE``).
        remote_misses: Remote lookups that found nothing.
        remote_refused: Remote values refused: a bad or missing signature,
            bounds, or an entry that does not match the request.
        remote_stores: Entries put to the remote cache.
        remote_duplicates: Puts that found the entry there already (another
            machine compiled it too).
        remote_store_failures: Puts that failed or were dropped (the server
            full or down, the queue full).
        remote_errors: Remote calls that failed or timed out.
        remote_waits: Compiles served after waiting for another machine's
            compile of the same kernel.

    The ``remote_*`` counters are ABI 1.5's; a plugin of ABI 1.4 leaves them 0.
    """

    compiles: int
    compile_failures: int
    cache_hits: int
    cache_misses: int
    cache_stores: int
    bytes_stored: int
    cache_evictions: int
    bytes_evicted: int
    worker_spawns: int
    worker_crashes: int
    timeouts: int
    cached_failures: int
    remote_hits: int
    remote_misses: int
    remote_refused: int
    remote_stores: int
    remote_duplicates: int
    remote_store_failures: int
    remote_errors: int
    remote_waits: int


def stats() -> Stats:
    """Reads the plugin's process-wide counters (``hipacm_get_stats``).

    Returns:
        A :class:`Stats` snapshot.

    Raises:
        AbiMismatchError: The loaded plugin predates ABI 1.4 and has no counters.
    """
    _require_abi_1_4("hipacm.stats()")
    raw = _ffi.Stats()
    # A plugin before ABI 1.5 knows version 1 only: ask for no more (the rest stays 0).
    raw.struct_size = (ctypes.sizeof(raw) if _plugin.has_abi_1_5
                       else _ffi.Stats.remote_hits.offset)
    status = _api.get_stats(byref(raw))
    if status != Status.SUCCESS:
        raise error_for(status, _last_error())
    return Stats(**{name: int(getattr(raw, name)) for name, _ in _ffi.Stats._fields_[1:]})
