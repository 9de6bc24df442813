# SPDX-License-Identifier: MIT
"""Status codes and the exception hierarchy of the hipacm bindings."""

from __future__ import annotations

import enum
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Type


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

    @classmethod
    def _missing_(cls, value: object) -> Optional["Status"]:
        # A number a newer plugin may return: a pseudo-member UNKNOWN_<n> that
        # keeps the number, so ``.status`` is always a Status with a ``.name``.
        if isinstance(value, bool) or not isinstance(value, int) or not -2**31 <= value < 2**31:
            return None
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}" if value >= 0 else f"UNKNOWN_MINUS_{-value}"
        member._value_ = value
        # setdefault: two threads meeting the same number get the same member.
        return cls._value2member_map_.setdefault(value, member)  # type: ignore[return-value]


def to_status(value: int) -> Status:
    """The :class:`Status` for ``value``; a number this package does not know
    becomes a pseudo-member named ``UNKNOWN_<n>`` whose int value is ``n``."""
    return Status(int(value))


def _short_key(key: str) -> str:
    """A key for a repr: a content digest is cut to its first 12 hex digits."""
    if key.startswith("sha256:") and len(key) > 19:
        return key[:19] + "..."
    return key


def _status_name(status: Status) -> str:
    return status.name


class HipacmError(RuntimeError):
    """Base class of every error the plugin reports.

    Attributes:
        status: The plugin's status code.
        message: The plugin's message (``hipacm_last_error_message`` for a
            failing call, the future's error message for a failed compile).
    """

    status: Status

    def __init__(self, message: str, status: int = Status.INTERNAL) -> None:
        super().__init__(message)
        self.message = message
        self.status = to_status(status)

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

    key: str
    log: str

    def __init__(self, message: str, status: int, key: str, log: str) -> None:
        super().__init__(message, status)
        self.key = key
        self.log = log

    def __str__(self) -> str:
        text = f"hipacm: compile of {self.key!r} failed ({self.status.name}): {self.message}"
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
    return cls(message or f"hipacm call failed with {st.name}", st)


def _group_summary(errors: Sequence[CompilationError], total: int) -> str:
    counts: Dict[str, int] = {}
    for error in errors:
        counts[error.status.name] = counts.get(error.status.name, 0) + 1
    by_status = ", ".join(f"{n} {name}" for name, n in counts.items())
    noun = "kernel" if total == 1 else "kernels"
    return f"hipacm: {len(errors)} of {total} {noun} failed ({by_status})"


class _CompilationErrorGroupBase(CompilationError):
    """What both forms of :class:`CompilationErrorGroup` share."""

    errors: List[CompilationError]
    total: int

    def _fill(self, errors: Sequence[CompilationError], total: int) -> None:
        if not errors:
            raise ValueError("hipacm: a CompilationErrorGroup needs at least one error")
        first = errors[0]
        self.errors = list(errors)
        self.total = max(int(total), len(self.errors))
        self.status = first.status
        self.key = first.key
        self.log = first.log

    def __str__(self) -> str:
        return f"{_group_summary(self.errors, self.total)}; the first: {self.errors[0]}"

    def __reduce__(self) -> Tuple[Any, ...]:
        plain = isinstance(self, _PlainCompilationErrorGroup)
        return (_rebuild_group, (plain, self.errors, self.total))

    def __repr__(self) -> str:
        return (f"CompilationErrorGroup(failed={len(self.errors)}, total={self.total}, "
                f"errors={self.errors!r})")


_GROUP_DOC = """Every compile that failed when :class:`AsyncCompileMode` exited.

    A :class:`CompilationError`, so ``except CompilationError`` catches it, with
    the first failure's (in completion order) ``status``, ``key``, ``log`` and
    ``message``. On Python 3.11+ it is also an ``ExceptionGroup`` of the
    per-kernel errors, so ``except* CompilationError`` works. On every Python
    ``errors`` is the list of per-kernel :class:`CompilationError` s (the
    first failure first, then the others in submission order), ``exceptions``
    the same as a tuple, and ``total`` the number of kernels the mode
    compiled (dedup hits count once).
    """


class _PlainCompilationErrorGroup(_CompilationErrorGroupBase):
    __doc__ = _GROUP_DOC

    def __init__(self, errors: Sequence[CompilationError], total: int) -> None:
        if not errors:
            raise ValueError("hipacm: a CompilationErrorGroup needs at least one error")
        first = errors[0]
        CompilationError.__init__(self, first.message, first.status, first.key, first.log)
        self._fill(errors, total)

    @property
    def exceptions(self) -> Tuple[CompilationError, ...]:
        """The per-kernel errors, as ``ExceptionGroup.exceptions`` names them."""
        return tuple(self.errors)


_PlainCompilationErrorGroup.__name__ = "CompilationErrorGroup"
_PlainCompilationErrorGroup.__qualname__ = "CompilationErrorGroup"

if sys.version_info >= (3, 11) and not TYPE_CHECKING:
    class CompilationErrorGroup(_CompilationErrorGroupBase, ExceptionGroup):  # noqa: F821
        __doc__ = _GROUP_DOC

        def __new__(cls, errors: Sequence[CompilationError], total: int) -> Any:
            if not errors:
                raise ValueError("hipacm: a CompilationErrorGroup needs at least one error")
            # ExceptionGroup's message is read-only: the first failure's message.
            return ExceptionGroup.__new__(cls, errors[0].message, list(errors))  # noqa: F821

        def __init__(self, errors: Sequence[CompilationError], total: int) -> None:
            self._fill(errors, total)

        def derive(self, excs: Sequence[Any]) -> Any:
            # except* splits: keep the type (and so .errors) when every part is ours.
            if excs and all(isinstance(e, CompilationError) for e in excs):
                return CompilationErrorGroup(excs, self.total)
            return ExceptionGroup(self.message, list(excs))  # noqa: F821
else:
    CompilationErrorGroup = _PlainCompilationErrorGroup

# Only tests set this: True makes make_group() build the pre-3.11 form on any Python.
_force_plain_group = False


def make_group(errors: Sequence[CompilationError], total: int) -> CompilationErrorGroup:
    """The group __exit__ raises: the ExceptionGroup form where Python has one."""
    cls = _PlainCompilationErrorGroup if _force_plain_group else CompilationErrorGroup
    return cls(errors, total)


def _rebuild_group(plain: bool, errors: List[CompilationError], total: int) -> CompilationError:
    cls = _PlainCompilationErrorGroup if plain else CompilationErrorGroup
    return cls(errors, total)
