# SPDX-License-Identifier: MIT
"""AsyncCompileMode's keyword arguments as hipacm_mode_config fields: isolation, cache,
remote_cache and load_device, each checked, and a URL shown without its credentials."""

from __future__ import annotations

import os
from typing import Any, Optional, Tuple

from . import _ffi
from ._core import _require_abi_1_5
from ._request import _encode

_ISOLATION = {
    "auto": _ffi.ISOLATION_AUTO,
    "in-process": _ffi.ISOLATION_IN_PROCESS,
    "process": _ffi.ISOLATION_PROCESS,
}


_CACHE_POLICIES = {"off": _ffi.CACHE_OFF, "read": _ffi.CACHE_READ,
                   "readwrite": _ffi.CACHE_READWRITE}


def _cache_setting(cache: Any) -> Tuple[int, Optional[bytes]]:
    """``cache=`` as (cache_policy, cache_dir) for hipacm_mode_config."""
    if cache is None:
        return _ffi.CACHE_DEFAULT, None
    if isinstance(cache, str) and cache in _CACHE_POLICIES:
        return _CACHE_POLICIES[cache], None
    if isinstance(cache, (str, os.PathLike)):
        path = os.fspath(cache)
        if not isinstance(path, str):
            raise TypeError("hipacm: cache must be a str path, not bytes")
        if not path:
            raise ValueError("hipacm: cache must not be an empty path (pass None for the default)")
        return _ffi.CACHE_DEFAULT, _encode(path, "cache")
    raise TypeError(f"hipacm: cache must be None, a policy ('off', 'read', 'readwrite') or a "
                    f"directory path, not {type(cache).__name__}")


def _remote_cache_setting(remote_cache: Any) -> Optional[bytes]:
    """``remote_cache=`` as hipacm_mode_config.remote_cache (None: the environment's)."""
    if remote_cache is None:
        return None
    if not isinstance(remote_cache, str):
        raise TypeError(f"hipacm: remote_cache must be a redis:// URL, 'off' or None, "
                        f"not {type(remote_cache).__name__}")
    if not remote_cache:
        raise ValueError("hipacm: remote_cache must not be empty (pass None for "
                         "$HIPACM_REMOTE_CACHE, or 'off')")
    if remote_cache != "off":  # "off" means the same to a plugin that has no remote tier
        _require_abi_1_5("remote_cache=")
    return _encode(remote_cache, "remote_cache")


def _redacted_url(url: str) -> str:
    """``url`` without its user and password (for repr and messages)."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rpartition('@')[2]}"
    return url


_MAX_LOAD_DEVICE = 0x7FFFFFFF  # hipacm_mode_config.load_device is an int32_t


def _load_device_setting(load_device: Any) -> int:
    """``load_device=`` as hipacm_mode_config.load_device."""
    if load_device is None:
        return _ffi.LOAD_NONE
    if isinstance(load_device, bool) or not isinstance(load_device, int):
        raise TypeError(f"hipacm: load_device must be a device index (int) or None, "
                        f"not {type(load_device).__name__}")
    if not 0 <= load_device <= _MAX_LOAD_DEVICE:
        raise ValueError(f"hipacm: load_device must be a device index from 0 to "
                         f"{_MAX_LOAD_DEVICE} or None, not {load_device}")
    return load_device
