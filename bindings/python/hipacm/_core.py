"""The Python API over the provider table: modes, futures, kernels, callbacks.

Lifetime rules that keep the plugin from ever touching freed Python memory:

* Every ``hipacm_request`` buffer (strings, arrays) is a local of the call that
  passes it; the plugin copies what it keeps before the call returns.
* Callbacks go through ONE module-level pair of ``CFUNCTYPE`` trampolines that
  live as long as the module. ``user_data`` is an integer id into
  ``_registry``, which holds the per-submit :class:`_FutureState` (and so the
  user's ``finalize``/``cleanup`` callables) until the plugin can no longer
  call them: the finalize trampoline drops the entry when finalize succeeded
  (cleanup cannot follow), the cleanup trampoline drops it when it runs (it is
  always last), a rejected submit drops it at once, and a dedup hit's entry
  (the plugin never attaches its callbacks) is dropped when the mode exits.
* Each :class:`FutureKernel` owns exactly one reference to its
  ``hipacm_future``, released once by a ``weakref.finalize``.

Exceptions raised by ``finalize``/``cleanup`` are caught in the trampoline
(nothing is printed), make it return nonzero, and are re-raised to the Python
caller whose ``result()`` or ``__exit__`` collected the future. A trampoline
records each state it ran in the innermost *collection frame* of its thread:
a list pushed around every ``future_result``/``mode_exit`` call.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import os
import threading
import weakref
from ctypes import POINTER, byref, c_char_p, c_void_p
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

from . import _ffi
from ._errors import (
    CompilationError,
    HipacmError,
    ModeAlreadyActiveError,
    ModeClosedError,
    Status,
    error_for,
    to_status,
)

_plugin = _ffi.load_plugin()
_P = _plugin.provider


class _Api:
    """The provider's function pointers, read once (each is a CFUNCTYPE: the GIL
    is released during the call)."""

    def __init__(self, provider: _ffi.Provider) -> None:
        for name, _ in _ffi.Provider._fields_[4:]:
            setattr(self, name, getattr(provider, name))


_api: Any = _Api(_P)

#: Path of the loaded ``libhipacm.so.1``.
library_path: str = _plugin.path
#: The plugin's release version (``hipacm_provider.version``).
plugin_version: str = _plugin.version

_ISOLATION = {
    "auto": _ffi.ISOLATION_AUTO,
    "in-process": _ffi.ISOLATION_IN_PROCESS,
    "process": _ffi.ISOLATION_PROCESS,
}
_MAX_TIMEOUT_MS = 0xFFFFFFFF
_INT64_MAX = 2**63 - 1


def _wait_milliseconds(timeout: float) -> int:
    """``timeout`` seconds as future_wait's int64 milliseconds, rounded up.

    ctypes silently truncates an int that does not fit, so a huge timeout
    could wrap to a few milliseconds; it saturates instead, and the plugin
    waits forever for INT64_MAX.
    """
    if math.isnan(timeout):
        raise ValueError("hipacm: wait timeout is NaN")
    if timeout <= 0:
        return 0
    if math.isinf(timeout):
        return _INT64_MAX
    return min(_INT64_MAX, int(math.ceil(timeout * 1000.0)))


# HIPACM_CACHE_* of hipacm.h.
_CACHE_DEFAULT = 0
_CACHE_POLICIES = {"off": 1, "read": 2, "readwrite": 3}


def _cache_setting(cache: Any) -> Tuple[int, Optional[bytes]]:
    """``cache=`` as (cache_policy, cache_dir) for hipacm_mode_config."""
    if cache is None:
        return _CACHE_DEFAULT, None
    if isinstance(cache, str) and cache in _CACHE_POLICIES:
        return _CACHE_POLICIES[cache], None
    if isinstance(cache, (str, os.PathLike)):
        path = os.fspath(cache)
        if not isinstance(path, str):
            raise TypeError("hipacm: cache must be a str path, not bytes")
        if not path:
            raise ValueError("hipacm: cache must not be an empty path (pass None for the default)")
        return _CACHE_DEFAULT, _encode(path, "cache")
    raise TypeError(f"hipacm: cache must be None, a policy ('off', 'read', 'readwrite') or a "
                    f"directory path, not {type(cache).__name__}")


def _last_error() -> str:
    return _ffi.optional_str(_api.last_error_message())


# --------------------------------------------------------------------------
# Kernels


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
    """

    key: str
    code: bytes = field(repr=False)
    log: str = field(repr=False)
    arch: str
    lowered_names: Dict[str, str]
    from_cache: bool
    compile_seconds: float


def _kernel_from_ptr(kp: Any, name_expressions: Sequence[str]) -> Kernel:
    k = kp.contents
    code = ctypes.string_at(k.code, k.code_size) if k.code and k.code_size else b""
    lowered = [_ffi.optional_str(k.lowered_names[i]) for i in range(k.num_lowered_names)]
    from_cache = False
    if k.struct_size >= _ffi.KERNEL_FROM_CACHE_END:
        from_cache = bool(_ffi.KernelWithCache.from_address(ctypes.addressof(k)).from_cache)
    return Kernel(
        key=_ffi.optional_str(k.key),
        code=code,
        log=_ffi.optional_str(k.log),
        arch=_ffi.optional_str(k.arch),
        lowered_names=dict(zip(name_expressions, lowered)),
        from_cache=from_cache,
        compile_seconds=float(k.compile_seconds),
    )


def _error_from_handle(handle: int, status: int, key: str, message: Optional[str] = None) -> CompilationError:
    log = _ffi.optional_str(_api.future_log(handle))
    if message is None:
        message = _ffi.optional_str(_api.future_error_message(handle))
    return CompilationError(message, to_status(status), key, log)


# --------------------------------------------------------------------------
# Per-future state, the callback registry and the collection frames

_EXC_NONE, _EXC_HELD, _EXC_PENDING, _EXC_REPORTED = range(4)


class _FutureState:
    """What Python knows about one submitted compile. Shared by the
    :class:`FutureKernel` and, while its callbacks may run, the registry."""

    __slots__ = (
        "handle", "key", "name_expressions", "finalize", "cleanup",
        "kernel", "finalize_exc", "exc", "exc_state", "exc_origin", "callbacks_pending",
    )

    def __init__(self, name_expressions: Tuple[str, ...], finalize: Optional[Callable[..., Any]],
                 cleanup: Optional[Callable[..., Any]]) -> None:
        self.handle: int = 0
        self.key: str = ""
        self.name_expressions = name_expressions
        self.finalize = finalize
        self.cleanup = cleanup
        self.kernel: Optional[Kernel] = None      # set once the compile succeeded
        self.finalize_exc: Optional[BaseException] = None
        self.exc: Optional[BaseException] = None  # what a callback raised
        self.exc_state = _EXC_NONE
        self.exc_origin = ""                      # "finalize" or "cleanup"
        self.callbacks_pending = False            # attached and not yet finished


_registry: Dict[int, _FutureState] = {}
_registry_lock = threading.Lock()
_ids = itertools.count(1)
_exc_lock = threading.Lock()
_tls = threading.local()


def _register(state: _FutureState) -> int:
    with _registry_lock:
        entry_id = next(_ids)
        _registry[entry_id] = state
    return entry_id


def _unregister(entry_id: Optional[int]) -> Optional[_FutureState]:
    if entry_id is None:
        return None
    with _registry_lock:
        return _registry.pop(entry_id, None)


def _live_callback_entries() -> int:
    """How many submits may still have callbacks run (for tests and leak hunts)."""
    with _registry_lock:
        return len(_registry)


def _push_frame() -> List[_FutureState]:
    frames = getattr(_tls, "frames", None)
    if frames is None:
        frames = _tls.frames = []
    frame: List[_FutureState] = []
    frames.append(frame)
    return frame


def _pop_frame(frame: List[_FutureState]) -> None:
    frames = _tls.frames
    if frames and frames[-1] is frame:
        frames.pop()


def _current_frame() -> Optional[List[_FutureState]]:
    frames = getattr(_tls, "frames", None)
    return frames[-1] if frames else None


def _note_collected(state: _FutureState) -> None:
    frame = _current_frame()
    if frame is not None and not any(s is state for s in frame):
        frame.append(state)


def _store_exception(state: _FutureState, exc: BaseException, origin: str) -> None:
    with _exc_lock:
        state.exc = exc
        state.exc_origin = origin
        # HELD: the collector whose frame this is will raise it when its call
        # returns. Without a frame (a callback run by a non-Python collector)
        # it waits for the next result() caller.
        state.exc_state = _EXC_HELD if _current_frame() is not None else _EXC_PENDING


def _claim(state: _FutureState, held_here: bool) -> Optional[BaseException]:
    """Takes a callback exception for re-raising, at most once overall.

    ``held_here``: the caller's own frame ran the callback. A HELD exception
    belongs to the collector in whose frame it was raised; a PENDING one to
    whichever caller asks first.
    """
    allowed = (_EXC_HELD, _EXC_PENDING) if held_here else (_EXC_PENDING,)
    with _exc_lock:
        if state.exc is not None and state.exc_state in allowed:
            state.exc_state = _EXC_REPORTED
            return state.exc
    return None


def _held_in(frame: List[_FutureState]) -> List[_FutureState]:
    with _exc_lock:
        return [s for s in frame if s.exc_state == _EXC_HELD]


def _make_pending(states: Iterable[_FutureState]) -> None:
    with _exc_lock:
        for s in states:
            if s.exc_state == _EXC_HELD:
                s.exc_state = _EXC_PENDING


def _add_note(exc: BaseException, note: str) -> None:
    add_note = getattr(exc, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(note)


def _finalize_trampoline(user_data: Optional[int], handle: Optional[int]) -> int:
    state = _registry.get(user_data or 0)
    if state is None:  # cannot happen unless the registry was released early
        return 1
    ok = False
    try:
        _note_collected(state)
        kp = POINTER(_ffi.Kernel)()
        # Inside its own callback, future_result returns the compile outcome at once.
        if _api.future_result(handle, byref(kp)) != Status.SUCCESS or not kp:
            raise HipacmError("hipacm: future_result inside finalize did not return the kernel",
                              Status.INTERNAL)
        kernel = _kernel_from_ptr(kp, state.name_expressions)
        if state.finalize is not None:
            state.finalize(kernel)
        state.kernel = kernel
        ok = True
        return 0
    except BaseException as exc:  # noqa: B902 - nothing may escape into C
        state.finalize_exc = exc
        _store_exception(state, exc, "finalize")
        return 1
    finally:
        if ok:  # cleanup cannot follow a successful finalize
            state.finalize = state.cleanup = None  # never called again: let them go
            state.callbacks_pending = False
            _unregister(user_data)


def _cleanup_trampoline(user_data: Optional[int], handle: Optional[int]) -> None:
    state = _unregister(user_data)  # cleanup is always the last callback
    if state is None:
        return
    error: Optional[CompilationError] = None
    try:
        _note_collected(state)
        finalize_exc = state.finalize_exc
        if finalize_exc is not None:
            log = _ffi.optional_str(_api.future_log(handle))
            message = f"the finalize callback raised {type(finalize_exc).__name__}: {finalize_exc}"
            error = CompilationError(message, Status.FINALIZE_FAILED, state.key, log)
            error.__cause__ = finalize_exc
        else:
            status = _api.future_result(handle, None)  # the compile outcome, at once
            error = _error_from_handle(handle, status, state.key)
        if state.cleanup is not None:
            state.cleanup(error)
    except BaseException as exc:  # noqa: B902 - nothing may escape into C
        if exc.__context__ is None:  # as if raised while handling the failure
            exc.__context__ = error if error is not None else state.exc
        _store_exception(state, exc, "cleanup")
    finally:
        state.finalize = state.cleanup = None  # never called again: let them go
        state.callbacks_pending = False


# The only callback objects the plugin ever sees; they live as long as the module.
_FINALIZE_TRAMPOLINE = _ffi.FINALIZE_FN(_finalize_trampoline)
_CLEANUP_TRAMPOLINE = _ffi.CLEANUP_FN(_cleanup_trampoline)


# --------------------------------------------------------------------------
# Requests


def _encode(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    data = value.encode("utf-8")
    if b"\0" in data:
        raise ValueError(f"{what} contains a NUL character")
    return data


def _string_array(values: Sequence[bytes]) -> Any:
    if not values:
        return None
    return (c_char_p * len(values))(*values)


def _str_list(values: Iterable[str], what: str) -> Tuple[str, ...]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of str, not a single string")
    return tuple(values)


def _build_request(key: Optional[str], source: str, name: Optional[str], options: Iterable[str],
                   headers: Optional[Mapping[str, str]],
                   name_expressions: Tuple[str, ...]) -> Tuple[_ffi.Request, List[Any]]:
    """Builds a hipacm_request; the returned list keeps every buffer alive."""
    opts = [_encode(o, "options[]") for o in _str_list(options, "options")]
    header_items = list((headers or {}).items())
    header_names = [_encode(n, "header name") for n, _ in header_items]
    header_sources = [_encode(s, f"header {n!r}") for n, s in header_items]
    exprs = [_encode(e, "name_expressions[]") for e in name_expressions]
    req = _ffi.Request()
    req.struct_size = ctypes.sizeof(req)
    req.key = None if key is None else _encode(key, "key")
    req.source = _encode(source, "source")
    req.source_name = None if name is None else _encode(name, "name")
    keep = [
        _string_array(opts), _string_array(header_sources), _string_array(header_names),
        _string_array(exprs), opts, header_names, header_sources, exprs,
    ]
    req.options, req.num_options = keep[0], len(opts)
    req.header_sources, req.header_names, req.num_headers = keep[1], keep[2], len(header_items)
    req.name_expressions, req.num_name_expressions = keep[3], len(exprs)
    return req, keep


def _check_callable(value: Any, what: str) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"{what} must be callable or None, not {type(value).__name__}")


# --------------------------------------------------------------------------
# Futures


class FutureKernel:
    """The outcome of one submitted compile, like Triton's ``FutureKernel``.

    Attribute access that is not defined here is forwarded to :meth:`result`,
    so ``future.code`` blocks until the kernel is ready, as in Triton. Two
    submits of the same key in one mode return the same ``FutureKernel``.

    The future holds one reference to the plugin's ``hipacm_future``; it is
    released when the object is garbage collected. A future stays usable after
    its mode has exited.
    """

    def __init__(self) -> None:  # pragma: no cover - constructed by submit()
        raise TypeError("FutureKernel objects are created by AsyncCompileMode.submit()")

    @classmethod
    def _create(cls, state: _FutureState) -> "FutureKernel":
        self = object.__new__(cls)
        self._state = state
        self._kernel: Optional[Kernel] = None
        self._release = weakref.finalize(self, _api.future_release, state.handle)
        return self

    @property
    def key(self) -> str:
        """The dedup key: the caller's, or the plugin's ``"sha256:..."`` digest."""
        return self._state.key

    @property
    def status(self) -> Status:
        """The outcome so far without blocking: ``Status.NOT_READY`` while compiling.

        After a failed finalize this is ``Status.FINALIZE_FAILED``.
        """
        return to_status(_api.future_status(self._state.handle))  # type: ignore[return-value]

    def done(self) -> bool:
        """True once the compile has finished (its callbacks may not have run yet)."""
        return _api.future_status(self._state.handle) != Status.NOT_READY

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the compile has finished, without running callbacks.

        Args:
            timeout: Seconds to wait at most; None, infinity or any timeout
                beyond what int64 milliseconds hold waits forever.

        Returns:
            True if the compile finished, False on timeout.

        Raises:
            ValueError: ``timeout`` is NaN.
        """
        ms = -1 if timeout is None else _wait_milliseconds(timeout)
        status = _api.future_wait(self._state.handle, ms)
        if status == Status.SUCCESS:
            return True
        if status == Status.NOT_READY:
            return False
        raise error_for(status, _last_error())

    def result(self, ignore_errors: bool = False) -> Optional[Kernel]:
        """Waits for the compile, runs its ``finalize`` or ``cleanup`` once (here,
        if no other thread collected it first) and returns the kernel.

        Args:
            ignore_errors: Return None instead of raising when the compile failed.
                An exception raised by this future's own ``finalize``/``cleanup``
                is still re-raised (it is a bug in the caller's code, not a
                compile failure), as in Triton.

        Returns:
            The :class:`Kernel`, or None on failure with ``ignore_errors``.

        Raises:
            CompilationError: The compile failed (``.status``, ``.key``, ``.log``).
            BaseException: Whatever ``finalize`` or ``cleanup`` raised, re-raised
                once, to the caller that collected the future.
        """
        if self._kernel is not None:
            return self._kernel
        state = self._state
        frame = _push_frame()
        try:
            kp = POINTER(_ffi.Kernel)()
            status = _api.future_result(state.handle, byref(kp))
            kernel: Optional[Kernel] = None
            if status == Status.SUCCESS:
                kernel = state.kernel if state.kernel is not None else _kernel_from_ptr(
                    kp, state.name_expressions)
        finally:
            _pop_frame(frame)
            own = _claim(state, any(s is state for s in frame))
            _make_pending([s for s in frame if s is not state])  # never expected
        if own is not None:
            raise own
        if kernel is not None:
            # Not cached when called from this future's own finalize: the
            # callback may still fail the future.
            if not state.callbacks_pending:
                self._kernel = kernel
            return kernel
        if ignore_errors:
            return None
        message = None
        if status == Status.FINALIZE_FAILED and state.finalize_exc is not None:
            exc = state.finalize_exc
            message = f"the finalize callback raised {type(exc).__name__}: {exc}"
        error = _error_from_handle(state.handle, status, state.key, message)
        if state.exc is not None:
            raise error from state.exc
        raise error

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not found normally; forwards like Triton's.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.result(), name)

    def __repr__(self) -> str:
        try:
            status = self.status
            name = status.name if isinstance(status, Status) else str(status)
        except Exception:  # pragma: no cover
            name = "?"
        return f"<hipacm.FutureKernel key={self._state.key!r} status={name}>"


# --------------------------------------------------------------------------
# The mode

_current_mode: Optional["AsyncCompileMode"] = None
_current_lock = threading.Lock()


class AsyncCompileMode:
    """Compiles submitted kernels in the background, like Triton's
    ``triton.runtime._async_compile.AsyncCompileMode``.

    Only one mode can be active in a process (the plugin's slot). ``__exit__``
    always frees the slot first, then collects every compile, running each
    ``finalize``/``cleanup`` exactly once on the exiting thread (unless another
    thread's ``result()`` collected it first).

    Example:
        >>> with hipacm.AsyncCompileMode(arch="gfx90a") as mode:   # doctest: +SKIP
        ...     fut = mode.submit("vadd", SOURCE)
        >>> fut.result().code[:4]                                  # doctest: +SKIP
        b'\\x7fELF'

    Args:
        max_workers: Compiles run at once; None uses the hardware concurrency.
        ignore_errors: If True, ``__exit__`` does not raise for failed compiles
            (exceptions raised by ``finalize``/``cleanup`` are still raised).
        fail_fast: The first failure cancels compiles that have not started.
        arch: Target arch such as ``"gfx90a"``; None means ``$HIPACM_ARCH``,
            otherwise the current device's.
        isolation: ``"auto"`` (worker processes when ``hipacm-worker`` is found,
            else in-process; ``$HIPACM_ISOLATION`` overrides), ``"in-process"``
            or ``"process"`` (enter fails if no worker is found).
        timeout: Per-compile limit in seconds for worker processes; a compile
            past it ends with ``Status.TIMEOUT``. In-process compiles ignore it.
            None means no limit.
        cache: The persistent kernel cache. None: ``$HIPACM_CACHE`` and the
            default directory decide. ``"off"``, ``"read"`` or ``"readwrite"``:
            that policy in the default directory. Any other string or an
            ``os.PathLike``: that cache directory (the policy stays the default,
            so ``HIPACM_CACHE=off`` still turns it off; pass a ``Path`` for a
            directory literally named like a policy).

    Raises:
        ValueError: A bad ``isolation``, ``timeout``, ``max_workers`` or ``cache``.
        TypeError: A ``cache`` that is neither None, a string nor a path.
    """

    def __init__(self, max_workers: Optional[int] = None, *, ignore_errors: bool = False,
                 fail_fast: bool = False, arch: Optional[str] = None, isolation: str = "auto",
                 timeout: Optional[float] = None,
                 cache: Optional[Union[str, "os.PathLike[str]"]] = None) -> None:
        cache_policy, cache_dir = _cache_setting(cache)
        if isolation not in _ISOLATION:
            raise ValueError(
                f"hipacm: isolation must be one of {sorted(_ISOLATION)}, not {isolation!r}")
        if max_workers is not None:
            if isinstance(max_workers, bool) or not isinstance(max_workers, int):
                raise TypeError("hipacm: max_workers must be an int or None")
            if not 1 <= max_workers <= 0xFFFFFFFF:
                raise ValueError(f"hipacm: max_workers must be at least 1, not {max_workers}")
        timeout_ms = 0
        if timeout is not None:
            if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
                raise ValueError(f"hipacm: timeout must be a positive number of seconds or None, "
                                 f"not {timeout!r}")
            timeout_ms = max(1, int(math.ceil(timeout * 1000.0)))
            if timeout_ms > _MAX_TIMEOUT_MS:
                raise ValueError(f"hipacm: timeout {timeout!r} s is too large")
        self.max_workers = max_workers
        self.ignore_errors = bool(ignore_errors)
        self.fail_fast = bool(fail_fast)
        self.arch = arch
        self.isolation = isolation
        self.timeout = timeout
        self._arch_bytes = None if arch is None else _encode(arch, "arch")
        self._timeout_ms = timeout_ms
        self.cache = cache
        self._cache_policy = cache_policy
        self._cache_dir_bytes = cache_dir
        self._lock = threading.Lock()
        self._handle: Optional[int] = None
        self._futures: Dict[int, FutureKernel] = {}
        self._dedup_entries: List[int] = []

    # -- entering

    def __enter__(self) -> "AsyncCompileMode":
        global _current_mode
        with self._lock:
            if self._handle is not None:
                raise ModeAlreadyActiveError("hipacm: this AsyncCompileMode is already active",
                                             Status.MODE_ALREADY_ACTIVE)
            cfg = _ffi.ModeConfig()
            _api.mode_config_init_sized(byref(cfg), ctypes.sizeof(cfg))
            cfg.max_workers = self.max_workers or 0
            cfg.ignore_errors = int(self.ignore_errors)
            cfg.fail_fast = int(self.fail_fast)
            cfg.arch = self._arch_bytes
            cfg.isolation = _ISOLATION[self.isolation]
            cfg.compile_timeout_ms = self._timeout_ms
            cfg.cache_dir = self._cache_dir_bytes
            cfg.cache_policy = self._cache_policy
            out = c_void_p()
            status = _api.mode_enter(byref(cfg), byref(out))
            if status != Status.SUCCESS:
                raise error_for(status, _last_error())
            self._handle = out.value
            self._futures = {}
            self._dedup_entries = []
        with _current_lock:
            _current_mode = self
        return self

    @property
    def active(self) -> bool:
        """True between a successful ``__enter__`` and ``__exit__``."""
        return self._handle is not None

    # -- submitting

    def submit(self, key: Optional[str], source: str, *, name: Optional[str] = None,
               options: Sequence[str] = (), headers: Optional[Mapping[str, str]] = None,
               name_expressions: Sequence[str] = (),
               finalize: Optional[Callable[[Kernel], Any]] = None,
               cleanup: Optional[Callable[[CompilationError], Any]] = None) -> FutureKernel:
        """Schedules a compile and returns at once.

        Args:
            key: The dedup key; None uses the plugin's SHA-256 content digest
                (``"sha256:..."``) of everything that affects the output. A key
                already submitted in this mode returns the same
                :class:`FutureKernel`, and this call's callbacks are ignored.
            source: The HIP source.
            name: The source's file name for diagnostics (default ``kernel.hip``).
            options: hipRTC options, e.g. ``["-O3"]``.
            headers: Header name -> contents, for ``#include``.
            name_expressions: Expressions such as ``"scale<float>"`` whose lowered
                names are reported in :attr:`Kernel.lowered_names`.
            finalize: ``finalize(kernel)``, called once after a successful compile,
                on the thread that collects the future (``result()`` or
                ``__exit__``). If it raises, the future becomes
                ``FINALIZE_FAILED``, ``cleanup`` runs, and the exception is
                re-raised to that collector.
            cleanup: ``cleanup(error)``, called once with a :class:`CompilationError`
                after a failed, cancelled or finalize-failed compile, on the
                collecting thread. An exception it raises is re-raised to the
                collector in place of the compile error.

        Returns:
            The :class:`FutureKernel`.

        Raises:
            ModeClosedError: The mode is not active.
            InvalidArgumentError: The plugin rejected the request.
            TypeError, ValueError: A badly typed argument, or one with a NUL.
        """
        _check_callable(finalize, "finalize")
        _check_callable(cleanup, "cleanup")
        exprs = _str_list(name_expressions, "name_expressions")
        req, keep = _build_request(key, source, name, options, headers, exprs)
        state = _FutureState(exprs, finalize, cleanup)
        entry_id: Optional[int] = None
        if finalize is not None or cleanup is not None:
            state.callbacks_pending = True
            entry_id = _register(state)
            req.finalize = _FINALIZE_TRAMPOLINE
            req.cleanup = _CLEANUP_TRAMPOLINE
            req.user_data = entry_id
        attached = False
        try:
            # Held across the C submit, so the FutureKernel of a key always
            # belongs to the submit whose callbacks the plugin attached.
            with self._lock:
                handle = self._handle
                if handle is None:
                    raise ModeClosedError("hipacm: the mode is not active (not entered, or exited)",
                                          Status.MODE_CLOSED)
                out = c_void_p()
                status = _api.submit(handle, byref(req), byref(out))
                if status != Status.SUCCESS:
                    raise error_for(status, _last_error())
                attached = True
                h = out.value
                existing = self._futures.get(h)
                if existing is not None:  # a dedup hit: one more reference, no callbacks
                    _api.future_release(h)
                    if entry_id is not None:
                        self._dedup_entries.append(entry_id)
                    return existing
                try:
                    state.handle = h
                    state.key = _ffi.optional_str(_api.future_key(h))
                    future = FutureKernel._create(state)
                except BaseException:
                    _api.future_release(h)
                    raise
                self._futures[h] = future
                return future
        finally:
            if not attached:
                _unregister(entry_id)
            del keep

    # -- exiting

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> bool:
        """Leaves the mode: frees the slot, then collects every compile.

        If the with-body raised, that exception propagates unchanged (compile
        failures do not replace it). Otherwise the first failure in completion
        order is raised as :class:`CompilationError` (unless ``ignore_errors``),
        or, if the callback exception of a future this exit collected came
        first, that exception itself.
        """
        global _current_mode
        with self._lock:
            handle = self._handle
            self._handle = None  # later submits get ModeClosedError
        if handle is None:
            return False
        frame = _push_frame()
        first = c_void_p()
        try:
            status = _api.mode_exit(handle, byref(first))
            message = _last_error() if status != Status.SUCCESS else ""
        finally:
            _pop_frame(frame)
            with _current_lock:
                if _current_mode is self:
                    _current_mode = None
            with self._lock:
                futures, self._futures = self._futures, {}
                dedup, self._dedup_entries = self._dedup_entries, []
            for entry_id in dedup:  # the plugin never attached these callbacks
                _unregister(entry_id)

        failure: Optional[BaseException] = None
        first_state: Optional[_FutureState] = None
        if first.value:
            try:
                fk = futures.get(first.value)
                first_state = fk._state if fk is not None else None
                key = first_state.key if first_state else _ffi.optional_str(_api.future_key(first.value))
                fstatus = _api.future_status(first.value)
                msg = None
                if first_state is not None and first_state.finalize_exc is not None \
                        and fstatus == Status.FINALIZE_FAILED:
                    fe = first_state.finalize_exc
                    msg = f"the finalize callback raised {type(fe).__name__}: {fe}"
                failure = _error_from_handle(first.value, fstatus, key, msg)
                if first_state is not None and first_state.exc is not None:
                    failure.__cause__ = first_state.exc
            finally:
                _api.future_release(first.value)
        elif status != Status.SUCCESS:
            failure = error_for(status, message)
        del futures

        held = _held_in(frame)
        if exc is not None:
            # The body's exception wins; callback exceptions stay available to
            # result() and are named on it so they are not lost.
            _make_pending(held)
            for s in held:
                _add_note(exc, _pending_note(s))
            return False
        to_raise: Optional[BaseException] = failure
        if first_state is not None and any(s is first_state for s in held):
            to_raise = _claim(first_state, True) or failure
            held = [s for s in held if s is not first_state]
        elif failure is None and held:
            to_raise = _claim(held[0], True)
            held = held[1:]
        _make_pending(held)
        if to_raise is not None:
            for s in held:
                _add_note(to_raise, _pending_note(s))
            raise to_raise
        return False


def _pending_note(state: _FutureState) -> str:
    exc = state.exc
    return (f"hipacm: the {state.exc_origin} callback of {state.key!r} also raised "
            f"{type(exc).__name__}: {exc}; its FutureKernel.result() re-raises it")


def active_mode() -> Optional[AsyncCompileMode]:
    """The active :class:`AsyncCompileMode`, or None.

    None whenever the plugin's slot is empty (also while an exiting mode
    collects its compiles), and when the active mode was entered by someone
    else (a C host in the same process).
    """
    handle = _api.active_mode()
    if not handle:
        return None
    mode = _current_mode
    if mode is not None and mode._handle == handle:
        return mode
    return None


def _after_fork_in_child() -> None:
    """The plugin closes the parent's modes in a forked child (its slot is empty
    there); mirror that, and replace locks another thread may have held."""
    global _registry_lock, _exc_lock, _current_lock, _current_mode
    _registry_lock = threading.Lock()
    _exc_lock = threading.Lock()
    _current_lock = threading.Lock()
    mode = _current_mode
    _current_mode = None
    if mode is not None:
        mode._lock = threading.Lock()
        mode._handle = None  # submit: ModeClosedError; __exit__: nothing to do


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# --------------------------------------------------------------------------
# Synchronous compile and backend info


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
                return _kernel_from_ptr(kp, exprs)
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
