# SPDX-License-Identifier: MIT
"""The callback registry, collection frames, exception ownership and the C trampolines."""

# Why the plugin never touches freed Python memory through a callback:
#
# * Callbacks go through ONE module-level pair of CFUNCTYPE trampolines that
#   live as long as the module. user_data is an integer id into _registry,
#   which holds the per-submit _FutureState (and so the user's
#   finalize/cleanup callables) until the plugin can no longer call them: the
#   finalize trampoline drops the entry when finalize succeeded (cleanup cannot
#   follow), the cleanup trampoline drops it when it runs (it is always last),
#   a rejected submit drops it at once, and a dedup hit's entry (the plugin
#   never attaches its callbacks) is dropped when the mode exits.
#
# Exceptions raised by finalize/cleanup are caught in the trampoline (nothing
# is printed), make it return nonzero, and are re-raised to the Python caller
# whose result() or __exit__ collected the future. A trampoline records each
# state it ran in the innermost *collection frame* of its thread: a list
# pushed around every future_result/mode_exit call.

from __future__ import annotations

import itertools
import threading
from ctypes import POINTER, byref
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from . import _ffi
from ._core import Kernel, _api, _error_from_handle, _kernel_from_ptr
from ._errors import CompilationError, HipacmError, Status

_EXC_NONE, _EXC_HELD, _EXC_PENDING, _EXC_REPORTED = range(4)


class _FutureState:
    """What Python knows about one submitted compile. Shared by the
    :class:`FutureKernel` and, while its callbacks may run, the registry."""

    __slots__ = (
        "handle", "key", "arch", "name_expressions", "finalize", "cleanup",
        "kernel", "finalize_exc", "exc", "exc_state", "exc_origin", "callbacks_pending",
    )

    def __init__(self, name_expressions: Tuple[str, ...], finalize: Optional[Callable[..., Any]],
                 cleanup: Optional[Callable[..., Any]]) -> None:
        self.handle: int = 0
        self.key: str = ""
        self.arch: str = ""  # the mode's arch option; "" for the default
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


def _finalize_trampoline(user_data: Optional[int], raw_handle: Optional[int]) -> int:
    state = _registry.get(user_data or 0)
    if state is None or not raw_handle:  # cannot happen unless the registry was released early
        return 1
    handle: int = raw_handle
    ok = False
    try:
        _note_collected(state)
        kp = POINTER(_ffi.Kernel)()
        # Inside its own callback, future_result returns the compile outcome at once.
        if _api.future_result(handle, byref(kp)) != Status.SUCCESS or not kp:
            raise HipacmError("hipacm: future_result inside finalize did not return the kernel",
                              Status.INTERNAL)
        kernel = _kernel_from_ptr(kp, state.name_expressions, handle)
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


def _cleanup_trampoline(user_data: Optional[int], raw_handle: Optional[int]) -> None:
    state = _unregister(user_data)  # cleanup is always the last callback
    if state is None or not raw_handle:
        return
    handle: int = raw_handle
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


def _pending_note(state: _FutureState) -> str:
    exc = state.exc
    return (f"hipacm: the {state.exc_origin} callback of {state.key!r} also raised "
            f"{type(exc).__name__}: {exc}; its FutureKernel.result() re-raises it")


def _reset_locks_after_fork() -> None:
    """In a forked child: replaces the locks another thread of the parent may have held."""
    global _registry_lock, _exc_lock
    _registry_lock = threading.Lock()
    _exc_lock = threading.Lock()
