# SPDX-License-Identifier: MIT
"""FutureKernel: one submitted compile, holding one reference to its ``hipacm_future``."""

from __future__ import annotations

import math
import weakref
from ctypes import POINTER, byref
from typing import Any, Literal, Optional, overload

from . import _ffi
from ._callbacks import _claim, _FutureState, _make_pending, _pop_frame, _push_frame
from ._core import Kernel, _api, _error_from_handle, _kernel_from_ptr, _last_error
from ._errors import Status, _short_key, error_for, to_status

# Each FutureKernel owns exactly one reference to its hipacm_future, released
# once by a weakref.finalize, so a future outlives its mode for as long as
# Python holds it and never leaks when Python drops it.

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


class FutureKernel:
    """The outcome of one submitted compile, like Triton's ``FutureKernel``.

    Attribute access that is not defined here is forwarded to :meth:`result`,
    so ``future.code`` blocks until the kernel is ready, as in Triton. Two
    submits of the same key in one mode return the same ``FutureKernel``.

    The future holds one reference to the plugin's ``hipacm_future``; it is
    released when the object is garbage collected. A future stays usable after
    its mode has exited.
    """

    _state: _FutureState
    _kernel: Optional[Kernel]
    _release: weakref.finalize

    def __init__(self) -> None:  # pragma: no cover - constructed by submit()
        raise TypeError("FutureKernel objects are created by AsyncCompileMode.submit()")

    @classmethod
    def _create(cls, state: _FutureState) -> "FutureKernel":
        self = object.__new__(cls)
        self._state = state
        self._kernel = None
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
        return bool(_api.future_status(self._state.handle) != Status.NOT_READY)

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

    @overload
    def result(self, ignore_errors: Literal[False] = ...) -> Kernel: ...

    @overload
    def result(self, ignore_errors: bool) -> Optional[Kernel]: ...

    def result(self, ignore_errors: bool = False) -> Optional[Kernel]:
        """Waits for the compile, runs its ``finalize`` or ``cleanup`` once (here,
        if no other thread collected it first) and returns the kernel.

        Args:
            ignore_errors: Return None instead of raising when the compile failed.
                An exception raised by this future's own ``finalize``/``cleanup``
                is still re-raised (it is a bug in the caller's code, not a
                compile failure), as in Triton.

        Returns:
            The :class:`Kernel`, or None on failure with ``ignore_errors``
            (so ``result()`` is typed ``Kernel``, ``result(ignore_errors=True)``
            ``Optional[Kernel]``).

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
                    kp, state.name_expressions, state.handle)
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
        state = self._state
        try:
            status = self.status
            name = status.name if isinstance(status, Status) else str(status)
        except Exception:  # pragma: no cover - a repr never raises
            name = "?"
        if name == "NOT_READY":
            name = "pending"
        kernel = self._kernel or state.kernel
        arch = kernel.arch if kernel is not None else state.arch
        collected = " collected" if kernel is not None or state.exc_state else ""
        return (f"<hipacm.FutureKernel key={_short_key(state.key)!r} "
                f"arch={arch or 'default'} status={name}{collected}>")
