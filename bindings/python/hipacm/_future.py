# SPDX-License-Identifier: MIT
"""FutureKernel: one submitted compile, holding one reference to its ``hipacm_future``;
a ``concurrent.futures.Future`` whose completion a watcher thread signals."""

from __future__ import annotations

import concurrent.futures
import logging
import math
import os
import threading
import weakref
from concurrent.futures._base import FINISHED, RUNNING  # the states wait()/as_completed() read
from ctypes import POINTER, byref
from typing import TYPE_CHECKING, Any, Callable, List, Literal, Optional, Union, overload

from . import _ffi
from ._callbacks import _claim, _FutureState, _make_pending, _pop_frame, _push_frame
from ._core import Kernel, _api, _error_from_handle, _kernel_from_ptr, _last_error
from ._errors import Status, _short_key, error_for, to_status

# Each FutureKernel owns exactly one reference to its hipacm_future, released
# once by a weakref.finalize, so a future outlives its mode for as long as
# Python holds it and never leaks when Python drops it.
#
# concurrent.futures.wait() and as_completed() read a future's _state and
# append a waiter to its _waiters under its _condition; they learn of a
# completion only when the future moves to FINISHED and tells its waiters.
# The ABI has no completion callback, so the news comes from a watcher: a
# daemon thread parked in hipacm_future_wait (the GIL released, no polling)
# that exits once the compile is done. A watcher is started only when someone
# needs to be told: the first add_done_callback() or waiter on a pending
# future, or a mode with a progress callback. While it waits it holds the
# FutureKernel (so its handle and callbacks stay alive); the state change is
# made under _condition, exactly once, by whichever thread sees the completion
# first (the watcher, result(), wait(), done() or the mode's exit).

_INT64_MAX = 2**63 - 1
# Where the stdlib logs an exception a done callback raised.
_CF_LOGGER = logging.getLogger("concurrent.futures")

if TYPE_CHECKING:
    _FutureBase = concurrent.futures.Future[Kernel]
else:  # concurrent.futures.Future is subscriptable only from Python 3.9
    _FutureBase = concurrent.futures.Future


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


class _WaiterList(list):  # type: ignore[type-arg]
    """A future's ``_waiters``: the first waiter that wait()/as_completed()
    appends starts the future's watcher, so they are told of its completion."""

    __slots__ = ("_owner",)

    def __init__(self, owner: "FutureKernel") -> None:
        super().__init__()
        self._owner = weakref.ref(owner)

    def append(self, waiter: Any) -> None:
        super().append(waiter)
        owner = self._owner()
        if owner is not None:
            owner._watch()  # the caller holds the owner's _condition (an RLock)


# The futures whose watcher started, for a forked child (where no watcher survives).
_watched: "weakref.WeakSet[FutureKernel]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """No watcher thread survives a fork, and one may have held a future's lock:
    fresh locks, and the next done callback or waiter starts a new watcher."""
    for future in list(_watched):
        future._condition = threading.Condition()
        future._watching = False
    _watched.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _watch_until_done(future: "FutureKernel") -> None:
    """A watcher thread's body: park in the plugin until the compile is done."""
    handle = future._fstate.handle
    while _api.future_wait(handle, -1) == Status.NOT_READY:  # -1 waits forever
        pass  # not expected; a spurious NOT_READY just waits again
    future._set_finished()
    try:
        future._run_done_hooks()
    finally:
        _watched.discard(future)


class FutureKernel(_FutureBase):
    """The outcome of one submitted compile, like Triton's ``FutureKernel``,
    and a :class:`concurrent.futures.Future` of a :class:`Kernel`.

    Attribute access that is not defined here is forwarded to :meth:`result`,
    so ``future.code`` blocks until the kernel is ready, as in Triton. Two
    submits of the same key in one mode return the same ``FutureKernel``.

    ``concurrent.futures.wait()``, ``as_completed()`` and
    :meth:`add_done_callback` work: a compile counts as *running* from its
    submit until it is done, and it cannot be cancelled (:meth:`cancel`
    returns False; ``fail_fast`` cancellations are failures whose
    :meth:`exception` has ``Status.CANCELLED``).

    The future holds one reference to the plugin's ``hipacm_future``; it is
    released when the object is garbage collected. A future stays usable after
    its mode has exited.
    """

    # The stdlib's own fields, which its typeshed stub does not declare.
    _condition: threading.Condition
    _state: str
    _waiters: List[Any]
    _done_callbacks: List[Callable[["concurrent.futures.Future[Kernel]"], object]]
    _fstate: _FutureState
    _kernel: Optional[Kernel]
    _release: weakref.finalize
    _watching: bool
    _progress_hook: Optional[Callable[[], None]]

    def __init__(self) -> None:  # pragma: no cover - constructed by submit()
        raise TypeError("FutureKernel objects are created by AsyncCompileMode.submit()")

    @classmethod
    def _create(cls, state: _FutureState,
                progress_hook: Optional[Callable[[], None]] = None) -> "FutureKernel":
        self = object.__new__(cls)
        concurrent.futures.Future.__init__(self)
        self._state = RUNNING  # the plugin owns it from the submit: it cannot be withdrawn
        self._waiters = _WaiterList(self)
        self._fstate = state
        self._kernel = None
        self._watching = False
        self._progress_hook = progress_hook
        self._release = weakref.finalize(self, _api.future_release, state.handle)
        return self

    # -- completion signalling (concurrent.futures)

    def _watch(self) -> None:
        """Starts this future's watcher unless it has one or is already FINISHED."""
        with self._condition:
            if self._watching:
                return
            if self._state == FINISHED and not self._done_callbacks \
                    and self._progress_hook is None:
                return  # nobody left to tell
            self._watching = True
            _watched.add(self)
        try:
            threading.Thread(target=_watch_until_done, args=(self,),
                             name=f"hipacm-watch-{_short_key(self._fstate.key)}",
                             daemon=True).start()
        except BaseException:  # no thread (resource limits): the next trigger retries
            with self._condition:
                self._watching = False
            raise

    def _set_finished(self) -> None:
        """Marks the future FINISHED and tells the stdlib's waiters, once.
        Call only once the plugin's future is done; runs no user code."""
        with self._condition:
            if self._state == FINISHED:
                return
            self._state = FINISHED
            ok = _api.future_status(self._fstate.handle) == Status.SUCCESS
            for waiter in self._waiters:
                if ok:
                    waiter.add_result(self)
                else:
                    waiter.add_exception(self)
            self._condition.notify_all()

    def _run_done_hooks(self) -> None:
        """The done callbacks and the mode's progress, each once: on the
        watcher, or on the mode's exiting thread for the progress it finds
        not yet reported."""
        with self._condition:
            callbacks, self._done_callbacks = self._done_callbacks, []
            progress, self._progress_hook = self._progress_hook, None
        try:
            for fn in callbacks:
                try:
                    fn(self)
                except Exception:  # as the stdlib does: logged, never stops the others
                    _CF_LOGGER.exception("exception calling callback for %r", self)
        finally:  # even past a KeyboardInterrupt: the mode's exit waits for this report
            if progress is not None:
                progress()

    def _observed_done(self) -> bool:
        """The plugin's non-blocking status; moves the future to FINISHED when done."""
        if _api.future_status(self._fstate.handle) == Status.NOT_READY:
            return False
        self._set_finished()
        return True

    def add_done_callback(self,
                          fn: Callable[["concurrent.futures.Future[Kernel]"], object]) -> None:
        """Calls ``fn(future)`` once the compile is done.

        As with the stdlib, ``fn`` runs at once on this thread when the future
        is already FINISHED; otherwise on the future's watcher thread (a
        daemon thread named ``hipacm-watch-...``) when the compile finishes.
        It runs before the compile's ``finalize``/``cleanup`` if nobody has
        collected the future yet; ``fn`` may call :meth:`result`, which then
        collects it on the watcher thread. An exception ``fn`` raises is
        logged to the ``concurrent.futures`` logger, as the stdlib does.
        """
        with self._condition:
            if self._state != FINISHED:
                self._done_callbacks.append(fn)
                self._watch()
                return
        try:
            fn(self)
        except Exception:
            _CF_LOGGER.exception("exception calling callback for %r", self)

    def cancel(self) -> bool:
        """Returns False: a submitted compile cannot be withdrawn from the
        plugin, so it counts as running until it is done (as a running
        ``concurrent.futures.Future`` does). ``fail_fast`` is the way to stop
        queued compiles of a mode."""
        return False

    def cancelled(self) -> bool:
        """False: see :meth:`cancel`."""
        return False

    def running(self) -> bool:
        """True from the submit until the compile is done."""
        return not self.done()

    def set_running_or_notify_cancel(self) -> bool:
        raise RuntimeError("hipacm: a FutureKernel's state is set by the plugin")

    def set_result(self, result: Kernel) -> None:
        raise RuntimeError("hipacm: a FutureKernel's state is set by the plugin")

    def set_exception(self, exception: Optional[BaseException]) -> None:
        raise RuntimeError("hipacm: a FutureKernel's state is set by the plugin")

    # -- the hipacm API

    @property
    def key(self) -> str:
        """The dedup key: the caller's, or the plugin's ``"sha256:..."`` digest."""
        return self._fstate.key

    @property
    def status(self) -> Status:
        """The outcome so far without blocking: ``Status.NOT_READY`` while compiling.

        After a failed finalize this is ``Status.FINALIZE_FAILED``.
        """
        return to_status(_api.future_status(self._fstate.handle))

    def done(self) -> bool:
        """True once the compile has finished (its callbacks may not have run yet)."""
        return self._observed_done()

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
        status = _api.future_wait(self._fstate.handle, ms)
        if status == Status.SUCCESS:
            self._set_finished()
            return True
        if status == Status.NOT_READY:
            return False
        raise error_for(status, _last_error())

    @overload
    def result(self, timeout: Optional[float] = None) -> Kernel: ...

    @overload
    def result(self, timeout: Optional[float] = None, *,
               ignore_errors: Literal[False]) -> Kernel: ...

    @overload
    def result(self, timeout: Optional[float] = None, *,
               ignore_errors: bool) -> Optional[Kernel]: ...

    def result(self, timeout: Union[float, bool, None] = None, *,
               ignore_errors: bool = False) -> Optional[Kernel]:
        """Waits for the compile, runs its ``finalize`` or ``cleanup`` once (here,
        if no other thread collected it first) and returns the kernel.

        Args:
            timeout: Seconds to wait at most, as in ``concurrent.futures``
                (None waits forever). A bool here is taken as ``ignore_errors``,
                so Triton-style ``result(True)`` keeps its meaning.
            ignore_errors: Return None instead of raising when the compile failed.
                An exception raised by this future's own ``finalize``/``cleanup``
                is still re-raised (it is a bug in the caller's code, not a
                compile failure), as in Triton.

        Returns:
            The :class:`Kernel`, or None on failure with ``ignore_errors``
            (so ``result()`` is typed ``Kernel``, ``result(ignore_errors=True)``
            ``Optional[Kernel]``).

        Raises:
            TimeoutError: ``timeout`` passed first (``concurrent.futures.TimeoutError``).
            CompilationError: The compile failed (``.status``, ``.key``, ``.log``).
            BaseException: Whatever ``finalize`` or ``cleanup`` raised, re-raised
                once, to the caller that collected the future.
        """
        if isinstance(timeout, bool):
            ignore_errors, timeout = timeout, None
        if self._kernel is not None:
            return self._kernel
        if timeout is not None and not self.wait(timeout):
            raise concurrent.futures.TimeoutError(
                f"hipacm: the compile of {self.key!r} did not finish within {timeout} s")
        state = self._fstate
        frame = _push_frame()
        try:
            kp = POINTER(_ffi.Kernel)()
            status = _api.future_result(state.handle, byref(kp))
            kernel: Optional[Kernel] = None
            if status == Status.SUCCESS:
                kernel = state.kernel if state.kernel is not None else _kernel_from_ptr(
                    kp, state.name_expressions, state.handle)
        finally:
            _pop_frame(frame)
            own = _claim(state, any(s is state for s in frame))
            _make_pending([s for s in frame if s is not state])  # never expected
        self._set_finished()
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

    def exception(self, timeout: Optional[float] = None) -> Optional[BaseException]:
        """The exception :meth:`result` raises, or None after a success.

        Collects the future like :meth:`result` (its ``finalize``/``cleanup``
        runs here if nobody collected it first); an exception that callback
        raised is returned, not raised. A ``BaseException`` that is not an
        ``Exception`` (``KeyboardInterrupt``) propagates.

        Raises:
            TimeoutError: ``timeout`` seconds passed first.
        """
        if timeout is not None and not self.wait(timeout):
            raise concurrent.futures.TimeoutError(
                f"hipacm: the compile of {self.key!r} did not finish within {timeout} s")
        try:
            self.result()
        except Exception as exc:  # noqa: B902 - returned, as concurrent.futures does
            return exc
        return None

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes not found normally; forwards like Triton's.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.result(), name)

    def __repr__(self) -> str:
        state = self._fstate
        try:
            name = self.status.name
        except Exception:  # pragma: no cover - a repr never raises
            name = "?"
        if name == "NOT_READY":
            name = "pending"
        kernel = self._kernel or state.kernel
        arch = kernel.arch if kernel is not None else state.arch
        collected = " collected" if kernel is not None or state.exc_state else ""
        return (f"<hipacm.FutureKernel key={_short_key(state.key)!r} "
                f"arch={arch or 'default'} status={name}{collected}>")

