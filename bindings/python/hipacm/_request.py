# SPDX-License-Identifier: MIT
"""Checking the caller's arguments and building the C ``hipacm_request`` from them."""

# Every hipacm_request buffer (strings, arrays) is a local of the call that
# passes it; the plugin copies what it keeps before the call returns.

from __future__ import annotations

import ctypes
from ctypes import c_char_p
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import _ffi


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
