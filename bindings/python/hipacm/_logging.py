# SPDX-License-Identifier: MIT
"""Forwards the plugin's log events to ``logging.getLogger("hipacm")`` (ABI 1.4)."""

# Why the forwarding is safe on plugin threads, at fork and at exit:
#
# * The plugin sees ONE CFUNCTYPE object, created at import and referenced by
#   this module for the life of the process, with user_data NULL: nothing it
#   can call is ever freed while registered.
# * The callback catches everything; no exception ever reaches ctypes (which
#   would print it to fd 2, the very thing this module exists to avoid).
# * atexit unregisters it (fn NULL) before module teardown starts. The plugin
#   returns from hipacm_set_log_callback only once no call of the old callback
#   is running, and ctypes releases the GIL during that call, so a plugin
#   thread inside the callback can finish. After it, late events go to stderr.
# * In a forked child the registration is inherited with the memory; only
#   this module's lock is replaced, since a parent thread may have held it.
#
# The plugin filters by the max_level it was given, so events below it never
# take the GIL. That level follows the logger's effective level, read again
# at import, at every AsyncCompileMode entry and hipacm.compile() call, and by
# set_log_level(); $HIPACM_LOG, when set, caps it.

from __future__ import annotations

import atexit
import logging
import os
import threading
from typing import Any, Optional, Union

from . import _ffi

logger = logging.getLogger("hipacm")

_TO_PYTHON = {
    _ffi.LOG_ERROR: logging.ERROR,
    _ffi.LOG_WARNING: logging.WARNING,
    _ffi.LOG_INFO: logging.INFO,
    _ffi.LOG_DEBUG: logging.DEBUG,
}

# $HIPACM_LOG's names, as the plugin reads them; anything else means warning.
_ENV_LEVELS = {
    "off": _ffi.LOG_OFF, "none": _ffi.LOG_OFF, "quiet": _ffi.LOG_OFF,
    "error": _ffi.LOG_ERROR, "warning": _ffi.LOG_WARNING,
    "info": _ffi.LOG_INFO, "debug": _ffi.LOG_DEBUG,
}


def _forward(user_data: Optional[int], level: int, message: Optional[bytes]) -> None:
    try:
        text = message.decode("utf-8", errors="replace") if message else ""
        logger.log(_TO_PYTHON.get(level, logging.WARNING), "%s", text)
    except BaseException:  # noqa: B902 - nothing may escape into C
        pass


_CALLBACK = _ffi.LOG_FN(_forward)

_lock = threading.Lock()
_set_callback: Any = None  # the provider's set_log_callback; None before install()
_registered: Optional[int] = None  # the max_level the plugin has now
_closed = False


def _env_cap() -> int:
    value = os.environ.get("HIPACM_LOG")
    if value is None:
        return _ffi.LOG_DEBUG
    return _ENV_LEVELS.get(value, _ffi.LOG_WARNING)


def _logger_level() -> int:
    """The most verbose plugin level the logger would let through."""
    for level in (_ffi.LOG_DEBUG, _ffi.LOG_INFO, _ffi.LOG_WARNING, _ffi.LOG_ERROR):
        if logger.isEnabledFor(_TO_PYTHON[level]):
            return level
    return _ffi.LOG_OFF


def wanted_level() -> int:
    """The max_level the plugin should have: the logger's, capped by $HIPACM_LOG."""
    return min(_env_cap(), _logger_level())


def registered_level() -> Optional[int]:
    """The max_level last given to the plugin (None: no callback is registered)."""
    return _registered


def sync() -> None:
    """Gives the plugin the current wanted level, if it changed (cheap otherwise)."""
    global _registered
    if _set_callback is None or _closed:
        return
    level = wanted_level()
    if level == _registered:
        return
    with _lock:
        if _closed or level == _registered:
            return
        if _set_callback(_CALLBACK, None, level) == 0:
            _registered = level


def install(set_callback: Any) -> None:
    """Registers the forwarding callback through the provider's ``set_log_callback``
    (None: a plugin older than ABI 1.4, which keeps logging to stderr)."""
    global _set_callback
    if set_callback is None:
        return
    _set_callback = set_callback
    sync()
    atexit.register(_uninstall)


def _uninstall() -> None:
    global _closed, _registered
    with _lock:
        if _closed or _set_callback is None:
            return
        _closed = True
        _set_callback(_ffi.LOG_FN(0), None, _ffi.LOG_OFF)  # NULL: back to stderr
        _registered = None


def set_log_level(level: Union[int, str]) -> None:
    """Sets the ``"hipacm"`` logger's level and tells the plugin at once.

    The plugin only sends events the logger would let through, and reads the
    logger's level again at every :class:`AsyncCompileMode` entry and
    :func:`hipacm.compile` call; call this to lower the level for compiles
    already running in a mode. ``$HIPACM_LOG`` (off, error, warning, info,
    debug), when set, caps what the plugin sends.

    Args:
        level: A :mod:`logging` level, e.g. ``logging.DEBUG``, or its name in
            any case (``"debug"``, ``"WARNING"``); ``"off"`` (also ``"none"``
            or ``"quiet"``, as ``$HIPACM_LOG`` spells it) lets nothing through.

    Raises:
        ValueError: for a name that is not a level; TypeError for another type.
    """
    if isinstance(level, str):
        name = level.strip().upper()
        level = logging.CRITICAL + 10 if name in ("OFF", "NONE", "QUIET") else name
    elif isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"a logging level is an int or a name, not {type(level).__name__}")
    logger.setLevel(level)
    sync()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
