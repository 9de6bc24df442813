# SPDX-License-Identifier: MIT
"""AsyncCompileMode, the process-wide active mode, and what a forked child keeps of it."""

from __future__ import annotations

import ctypes
import logging
import math
import os
import threading
from ctypes import byref, c_void_p
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Union

from . import _callbacks, _ffi, _logging
from ._callbacks import (_CLEANUP_TRAMPOLINE, _FINALIZE_TRAMPOLINE, _add_note, _claim,
                         _FutureState, _held_in, _make_pending, _pending_note, _pop_frame,
                         _push_frame, _register, _unregister)
from ._core import Kernel, _api, _error_from_handle, _last_error, _require_abi_1_4
from ._errors import (_CompilationErrorGroupBase, ModeAlreadyActiveError, ModeClosedError,
                      CompilationError, Status, _group_summary, error_for, make_group)
from ._future import FutureKernel
from ._mode_settings import (_ISOLATION, _cache_setting, _load_device_setting, _redacted_url,
                             _remote_cache_setting)
from ._request import _build_request, _check_callable, _encode, _str_list

_MAX_TIMEOUT_MS = 0xFFFFFFFF
_LOGGER = logging.getLogger("hipacm")


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
        load_device: The device whose primary context each code object is
            loaded into, with every kernel in it resolved, before its future
            completes; the handles are then in :attr:`Kernel.module` and
            :attr:`Kernel.functions`. None (the default) compiles only. A
            failed load fails the future (the cleanup path) with
            ``Status.BACKEND_UNAVAILABLE`` (no driver or runtime, or no device
            with that index), ``OUT_OF_MEMORY`` or ``INTERNAL`` (the driver
            refused the code object).
        cache_failures: Also store compiles that fail with
            ``Status.COMPILATION`` in the persistent cache (with ``cache``
            read-write), and fail a later request with the same key at once
            with the stored log and message instead of compiling again.
            Crashes, timeouts and cancellations are never stored. Needs a
            plugin of ABI 1.4 (``AbiMismatchError`` otherwise).
        remote_cache: The shared remote cache tier below the persistent
            cache: ``"redis://[user[:password]@]host[:port][/db]"``, read on a
            local miss and, with ``$HIPACM_REMOTE_CACHE_MODE=read-write``,
            written after each compile; entries are served only when they
            verify against ``$HIPACM_REMOTE_CACHE_KEY_FILE``. None (the
            default): ``$HIPACM_REMOTE_CACHE``. ``"off"``: none. Used only
            while the cache is not off. A malformed URL fails ``__enter__``
            with ``InvalidArgumentError``; an unreachable server never fails
            a compile. A value other than ``"off"`` needs a plugin of ABI 1.5
            (``AbiMismatchError`` otherwise). Prefer ``$HIPACM_REMOTE_CACHE_PASSWORD_FILE`` to a
            password in the URL.
        progress: ``progress(done, total)``, called once per compile as it
            finishes (whatever its outcome): ``done`` compiles of the
            ``total`` submitted so far (dedup hits count once) have finished.
            It runs on the finished compile's watcher thread (a daemon
            thread named ``hipacm-watch-...``, one per compile in flight),
            or, for a compile whose watcher has not reported it yet when the
            mode exits, on the thread running ``__exit__``; calls are
            serialised (one at a time, ``done`` rising by one each), so it
            needs no lock of its own.
            ``__exit__`` returns only after the last call returned. An
            exception it raises is logged to the ``"hipacm"`` logger and
            dropped; compiles and later calls go on. It must not wait for
            the mode's exit or for another progress call.

    Raises:
        ValueError: A bad ``isolation``, ``timeout``, ``max_workers``, ``cache``,
            ``load_device`` or an empty ``remote_cache``.
        TypeError: A ``cache`` that is neither None, a string nor a path, a
            ``load_device`` that is neither None nor an int, or a
            ``remote_cache`` that is neither None nor a string.
        AbiMismatchError: ``cache_failures`` or ``remote_cache`` with a plugin
            that predates them.
    """

    def __init__(self, max_workers: Optional[int] = None, *, ignore_errors: bool = False,
                 fail_fast: bool = False, arch: Optional[str] = None, isolation: str = "auto",
                 timeout: Optional[float] = None,
                 cache: Optional[Union[str, "os.PathLike[str]"]] = None,
                 load_device: Optional[int] = None, cache_failures: bool = False,
                 progress: Optional[Callable[[int, int], Any]] = None,
                 remote_cache: Optional[str] = None) -> None:
        if cache_failures:
            _require_abi_1_4("cache_failures=True")
        remote_cache_bytes = _remote_cache_setting(remote_cache)
        _check_callable(progress, "progress")
        cache_policy, cache_dir = _cache_setting(cache)
        raw_load_device = _load_device_setting(load_device)
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
        self.load_device = load_device
        self._load_device = raw_load_device
        self.cache_failures = bool(cache_failures)
        self.remote_cache = remote_cache
        self._remote_cache_bytes = remote_cache_bytes
        self.progress = progress
        self._progress_lock = threading.Condition()
        self._total = 0     # distinct futures submitted since __enter__
        self._reported = 0  # progress calls begun
        self._returned = 0  # progress calls returned
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
            cfg.load_device = self._load_device
            cfg.cache_failures = int(self.cache_failures)
            # A plugin before ABI 1.5 ignores the field; __init__ refused a value for one.
            cfg.remote_cache = self._remote_cache_bytes
            _logging.sync()
            out = c_void_p()
            status = _api.mode_enter(byref(cfg), byref(out))
            if status != Status.SUCCESS:
                raise error_for(status, _last_error())
            self._handle = out.value
            self._futures = {}
            self._dedup_entries = []
            with self._progress_lock:
                self._total = self._reported = self._returned = 0
        with _current_lock:
            _current_mode = self
        return self

    @property
    def active(self) -> bool:
        """True between a successful ``__enter__`` and ``__exit__``."""
        return self._handle is not None

    def __repr__(self) -> str:
        state = "active" if self._handle is not None else "inactive"
        options = [f"arch={self.arch!r}" if self.arch is not None else "arch=default",
                   f"isolation={self.isolation!r}"]
        if self.max_workers is not None:
            options.append(f"max_workers={self.max_workers}")
        if self.timeout is not None:
            options.append(f"timeout={self.timeout!r}")
        if self.cache is not None:
            options.append(f"cache={os.fspath(self.cache)!r}")
        if self.load_device is not None:
            options.append(f"load_device={self.load_device}")
        if self.remote_cache is not None:
            options.append(f"remote_cache={_redacted_url(self.remote_cache)!r}")
        for flag in ("ignore_errors", "fail_fast", "cache_failures"):
            if getattr(self, flag):
                options.append(f"{flag}=True")
        return (f"<hipacm.AsyncCompileMode {state} {' '.join(options)} "
                f"futures={len(self._futures)}>")

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
                assert h is not None, "the plugin returned SUCCESS without a future"
                existing = self._futures.get(h)
                if existing is not None:  # a dedup hit: one more reference, no callbacks
                    _api.future_release(h)
                    if entry_id is not None:
                        self._dedup_entries.append(entry_id)
                    return existing
                hook: Optional[Callable[[], None]] = None
                try:
                    state.handle = h
                    state.key = _ffi.optional_str(_api.future_key(h))
                    state.arch = self.arch or ""
                    if self.progress is not None:
                        with self._progress_lock:
                            self._total += 1
                        hook = self._report_progress
                    future = FutureKernel._create(state, hook)
                except BaseException:
                    _api.future_release(h)
                    if hook is not None:  # never reported: the exit must not wait for it
                        with self._progress_lock:
                            self._total -= 1
                    raise
                self._futures[h] = future
                if hook is not None:
                    try:
                        future._watch()
                    except RuntimeError:  # no thread: __exit__ reports its progress
                        pass
                return future
        finally:
            if not attached:
                _unregister(entry_id)
            del keep

    # -- progress

    def _report_progress(self) -> None:
        """One compile finished: calls ``progress(done, total)``, one call at a time."""
        progress = self.progress
        with self._progress_lock:
            try:
                self._reported += 1
                if progress is not None:
                    try:
                        progress(self._reported, self._total)
                    except Exception:  # documented: logged, never stops the compiles
                        _LOGGER.exception("hipacm: the progress callback raised")
            finally:
                self._returned += 1
                self._progress_lock.notify_all()

    def _finish_futures(self, futures: List[FutureKernel]) -> None:
        """At exit, every compile is done: marks each future FINISHED (for
        concurrent.futures), reports the progress no watcher has reported
        yet, and waits for the progress calls in flight."""
        for future in futures:
            future._set_finished()
            with future._condition:
                hook, future._progress_hook = future._progress_hook, None
            if hook is not None:
                hook()
        with self._progress_lock:
            while self._returned < self._total:
                self._progress_lock.wait()

    # -- exiting

    def __exit__(self, exc_type: Any, exc: Optional[BaseException],
                 tb: Any) -> Literal[False]:
        """Leaves the mode: frees the slot, then collects every compile.

        If the with-body raised, that exception propagates (compile failures
        do not replace it; on Python 3.11+ a note on it counts them).
        Otherwise, unless ``ignore_errors``, every failed compile is raised
        at once as a :class:`CompilationErrorGroup` (a
        :class:`CompilationError` with ``.errors``; an ``ExceptionGroup``
        too on Python 3.11+), whose message counts them ("3 of 4 kernels
        failed"); or, if the callback exception of a future this exit
        collected came first, that exception itself, with a note counting
        the failures. Kernels that compiled are kept either way.
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
        first_handle = first.value
        order = list(futures.values())
        if first_handle:
            try:
                fk = futures.get(first_handle)
                first_state = fk._fstate if fk is not None else None
                key = first_state.key if first_state else _ffi.optional_str(_api.future_key(first_handle))
                first_error = _compile_error(first_handle, first_state, key)
                # Every failure, not just the first: the first in completion
                # order, then the others in submission order.
                errors = [first_error] + [
                    _compile_error(h, f._fstate, f._fstate.key) for h, f in futures.items()
                    if h != first_handle and _api.future_status(h) != Status.SUCCESS]
                failure = make_group(errors, max(len(futures), 1))
                failure.__cause__ = first_error.__cause__
            finally:
                _api.future_release(first_handle)
        elif status != Status.SUCCESS:
            failure = error_for(status, message)
        del futures
        self._finish_futures(order)
        del order

        held = _held_in(frame)
        if exc is not None:
            # The body's exception wins; callback exceptions stay available to
            # result() and are named on it so they are not lost, and so are
            # the compile failures.
            _make_pending(held)
            if isinstance(failure, _CompilationErrorGroupBase):
                _add_note(exc, _group_summary(failure.errors, failure.total)
                          + " as the mode exited; each FutureKernel.result() raises its error")
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
            if to_raise is not failure and isinstance(failure, _CompilationErrorGroupBase):
                # A callback's own exception goes first (as in Triton); the
                # compile failures are named on it.
                _add_note(to_raise, _group_summary(failure.errors, failure.total)
                          + "; each FutureKernel.result() raises its error")
            for s in held:
                _add_note(to_raise, _pending_note(s))
            raise to_raise
        return False


def _compile_error(handle: int, state: Optional[_FutureState], key: str) -> CompilationError:
    """The CompilationError of one failed future (its finalize's exception as the cause)."""
    fstatus = _api.future_status(handle)
    msg = None
    if state is not None and state.finalize_exc is not None \
            and fstatus == Status.FINALIZE_FAILED:
        fe = state.finalize_exc
        msg = f"the finalize callback raised {type(fe).__name__}: {fe}"
    error = _error_from_handle(handle, fstatus, key, msg)
    if state is not None and state.exc is not None:
        error.__cause__ = state.exc
    return error


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
    global _current_lock, _current_mode
    _callbacks._reset_locks_after_fork()
    _current_lock = threading.Lock()
    mode = _current_mode
    _current_mode = None
    if mode is not None:
        mode._lock = threading.Lock()
        mode._handle = None  # submit: ModeClosedError; __exit__: nothing to do


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
