# SPDX-License-Identifier: MIT
"""Status codes and the exception hierarchy of the hipacm bindings."""

from __future__ import annotations

import enum
from typing import Any, Dict, Optional, Tuple, Type


class Status(enum.IntEnum):
    """``hipacm_status``. The numbers are part of the C ABI and never change."""

    SUCCESS = 0
    INVALID_ARGUMENT = 1
    ABI_MISMATCH = 2
    MODE_ALREADY_ACTIVE = 3
    MODE_CLOSED = 4
    COMPILATION = 5
    COMPILER_CRASHED = 6
    TIMEOUT = 7
    CANCELLED = 8
    BACKEND_UNAVAILABLE = 9
    FINALIZE_FAILED = 10
    NOT_READY = 11
    OUT_OF_MEMORY = 12
    INTERNAL = 13


def to_status(value: int) -> "Status | int":
    """The :class:`Status` for ``value``, or the bare int for a number we do not know."""
    try:
        return Status(value)
    except ValueError:
        return value


def _short_key(key: str) -> str:
    """A key for a repr: a content digest is cut to its first 12 hex digits."""
    if key.startswith("sha256:") and len(key) > 19:
        return key[:19] + "..."
    return key


def _status_name(status: "Status | int") -> str:
    return status.name if isinstance(status, Status) else str(int(status))


class HipacmError(RuntimeError):
    """Base class of every error the plugin reports.

    Attributes:
        status: The plugin's status code.
        message: The plugin's message (``hipacm_last_error_message`` for a
            failing call, the future's error message for a failed compile).
    """

    def __init__(self, message: str, status: "Status | int" = Status.INTERNAL) -> None:
        super().__init__(message)
        self.message = message
        self.status = to_status(int(status))

    def __reduce__(self) -> Tuple[Any, ...]:  # keep the status when pickled (e.g. across processes)
        return (type(self), (self.message, int(self.status)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={_status_name(self.status)}, message={self.message!r})"


class InvalidArgumentError(HipacmError, ValueError):
    """The plugin rejected an argument (``INVALID_ARGUMENT``), e.g. an unknown arch."""


class AbiMismatchError(HipacmError):
    """A struct was smaller than the plugin accepts, or the loaded plugin's ABI
    is older than a feature needs, e.g. :func:`hipacm.stats` with a plugin
    before ABI 1.4 (``ABI_MISMATCH``)."""


class ModeAlreadyActiveError(HipacmError):
    """Another async compile mode is active in this process (``MODE_ALREADY_ACTIVE``).

    A subclass of :class:`RuntimeError`, like every :class:`HipacmError`.
    """


class ModeClosedError(HipacmError):
    """The mode is not active: not entered yet, exiting or exited (``MODE_CLOSED``)."""


class BackendUnavailableError(HipacmError):
    """No compiler could be loaded, no arch is known, or no worker was found
    for ``isolation="process"`` (``BACKEND_UNAVAILABLE``)."""


class OutOfMemoryError(HipacmError):
    """The plugin ran out of memory (``OUT_OF_MEMORY``)."""


class InternalError(HipacmError):
    """An unexpected failure inside the plugin (``INTERNAL``)."""


class CompilationError(HipacmError):
    """A compile did not produce a usable kernel.

    Raised by :meth:`FutureKernel.result`, by :func:`hipacm.compile` and by
    :class:`AsyncCompileMode`'s ``__exit__``. ``status`` says why:
    ``COMPILATION`` (the compiler rejected the source; see ``log``),
    ``COMPILER_CRASHED``, ``TIMEOUT``, ``CANCELLED`` (``fail_fast``),
    ``FINALIZE_FAILED`` (the finalize callback raised; the original exception
    is the ``__cause__``), ``OUT_OF_MEMORY`` or ``INTERNAL``.

    Attributes:
        key: The compile's dedup key.
        log: The compiler log ("" when there is none).
        status: A :class:`Status`.
        message: The plugin's error message for this compile.
    """

    def __init__(self, message: str, status: "Status | int", key: str, log: str) -> None:
        super().__init__(message, status)
        self.key = key
        self.log = log

    def __str__(self) -> str:
        status = self.status.name if isinstance(self.status, Status) else str(self.status)
        text = f"hipacm: compile of {self.key!r} failed ({status}): {self.message}"
        if self.log.strip():
            text += "\n" + self.log.rstrip()
        return text

    def __reduce__(self) -> Tuple[Any, ...]:  # keep it picklable despite the extra arguments
        return (type(self), (self.message, int(self.status), self.key, self.log))

    def __repr__(self) -> str:
        lines = len(self.log.splitlines())
        return (f"CompilationError(status={_status_name(self.status)}, "
                f"key={_short_key(self.key)!r}, message={self.message!r}, log={lines} lines)")


_BY_STATUS: Dict[int, Type[HipacmError]] = {
    Status.INVALID_ARGUMENT: InvalidArgumentError,
    Status.ABI_MISMATCH: AbiMismatchError,
    Status.MODE_ALREADY_ACTIVE: ModeAlreadyActiveError,
    Status.MODE_CLOSED: ModeClosedError,
    Status.BACKEND_UNAVAILABLE: BackendUnavailableError,
    Status.OUT_OF_MEMORY: OutOfMemoryError,
    Status.INTERNAL: InternalError,
}


def error_for(status: int, message: Optional[str]) -> HipacmError:
    """The exception for a failing call (not a failed compile)."""
    st = to_status(status)
    cls = _BY_STATUS.get(int(status), HipacmError)
    name = st.name if isinstance(st, Status) else f"status {status}"
    return cls(message or f"hipacm call failed with {name}", st)
