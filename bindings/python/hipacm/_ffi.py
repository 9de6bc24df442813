# SPDX-License-Identifier: MIT
"""ctypes mirror of ``include/hipacm/hipacm.h`` and the loader for ``libhipacm.so.1``.

Everything in this module is private. The structs below mirror the C header
field by field (ABI 1.5); ``tests/test_abi_layout.py`` checks their sizes and
offsets against a C compiler. Only ``hipacm_get_provider`` is looked up with
``dlsym``; every other call goes through the provider table, whose function
pointers are ``CFUNCTYPE`` prototypes, so ctypes releases the GIL for the
duration of each call and plugin threads never wait on the interpreter.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import List, Optional, Tuple, Union

#: The ABI major version these bindings implement (``HIPACM_ABI_VERSION_MAJOR``).
ABI_VERSION_MAJOR = 1
#: The ABI minor version whose structs, entry points and version request are mirrored here.
ABI_VERSION_MINOR = 5
#: The oldest minor whose plugin these bindings load: they initialise the mode
#: config with ``mode_config_init_sized`` (ABI 1.1) and read every field past
#: it only where ``struct_size`` says the plugin knows it.
ABI_VERSION_MINOR_REQUIRED = 1


def abi_version_encode(major: int, minor: int) -> int:
    """``HIPACM_ABI_VERSION_ENCODE``: the request passed to ``hipacm_get_provider`` (ABI 1.3)."""
    return (major << 16) | minor


#: ``HIPACM_ABI_VERSION``: what these bindings request first.
ABI_VERSION = abi_version_encode(ABI_VERSION_MAJOR, ABI_VERSION_MINOR)

SONAME = "libhipacm.so.1"

ISOLATION_AUTO = 0
ISOLATION_IN_PROCESS = 1
ISOLATION_PROCESS = 2

# HIPACM_CACHE_* (ABI 1.2).
CACHE_DEFAULT = 0
CACHE_OFF = 1
CACHE_READ = 2
CACHE_READWRITE = 3

# HIPACM_LOAD_NONE (ABI 1.2): load_device's "compile only".
LOAD_NONE = -1

# HIPACM_LOG_* (ABI 1.4): hipacm_set_log_callback's levels.
LOG_OFF = 0
LOG_ERROR = 1
LOG_WARNING = 2
LOG_INFO = 3
LOG_DEBUG = 4

# hipacm_status is a C enum: passed and returned as int.
c_status = c_int

# Handles are opaque pointers; ctypes gives them to Python as int or None.
c_mode_p = c_void_p
c_future_p = c_void_p

# typedef int (*hipacm_finalize_fn)(void* user_data, hipacm_future* f);
FINALIZE_FN = CFUNCTYPE(c_int, c_void_p, c_void_p)
# typedef void (*hipacm_cleanup_fn)(void* user_data, hipacm_future* f);
CLEANUP_FN = CFUNCTYPE(None, c_void_p, c_void_p)
# typedef void (*hipacm_log_fn)(void* user_data, int32_t level, const char* message);
LOG_FN = CFUNCTYPE(None, c_void_p, c_int32, c_char_p)


class ModeConfig(Structure):
    """``hipacm_mode_config`` (version 5, ABI 1.5)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("max_workers", c_uint32),
        ("ignore_errors", c_int32),
        ("fail_fast", c_int32),
        ("arch", c_char_p),
        # ---- end of version 1 (ABI 1.0) ----
        ("isolation", c_int32),
        ("compile_timeout_ms", c_uint32),
        # ---- end of version 2 (ABI 1.1) ----
        ("cache_dir", c_char_p),
        ("cache_policy", c_int32),
        ("load_device", c_int32),
        # ---- end of version 3 (ABI 1.2) ----
        ("cache_failures", c_int32),
        ("reserved_1_4", c_int32),
        # ---- end of version 4 (ABI 1.4) ----
        ("remote_cache", c_char_p),
        # ---- end of version 5 (ABI 1.5) ----
    ]


class Request(Structure):
    """``hipacm_request`` (version 1, ABI 1.0)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("key", c_char_p),
        ("source", c_char_p),
        ("source_name", c_char_p),
        ("options", POINTER(c_char_p)),
        ("num_options", c_size_t),
        ("header_sources", POINTER(c_char_p)),
        ("header_names", POINTER(c_char_p)),
        ("num_headers", c_size_t),
        ("name_expressions", POINTER(c_char_p)),
        ("num_name_expressions", c_size_t),
        ("finalize", FINALIZE_FN),
        ("cleanup", CLEANUP_FN),
        ("user_data", c_void_p),
        # ---- end of version 1 (ABI 1.0) ----
    ]


class Kernel(Structure):
    """``hipacm_kernel`` (version 1, ABI 1.0). Filled in by the plugin."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("key", c_char_p),
        ("code", c_void_p),
        ("code_size", c_size_t),
        ("log", c_char_p),
        ("arch", c_char_p),
        ("lowered_names", POINTER(c_char_p)),
        ("num_lowered_names", c_size_t),
        ("compile_seconds", c_double),
        # ---- end of version 1 (ABI 1.0) ----
    ]


class KernelWithCache(Structure):
    """``hipacm_kernel`` (version 2, ABI 1.2): with ``from_cache``, ``module`` and the functions.

    A field is read only when the plugin's ``hipacm_kernel.struct_size`` says
    it filled it in, so an older plugin reads as ``from_cache = False``.
    """

    _fields_ = Kernel._fields_ + [
        ("from_cache", c_int32),
        ("module", c_void_p),
        ("function_names", POINTER(c_char_p)),
        ("functions", POINTER(c_void_p)),
        ("num_functions", c_size_t),
        # ---- end of version 2 (ABI 1.2) ----
    ]


KERNEL_FROM_CACHE_END = KernelWithCache.from_cache.offset + ctypes.sizeof(c_int32)


class BackendInfo(Structure):
    """``hipacm_backend_info`` (version 1, ABI 1.0)."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("available", c_int32),
        ("compiler", c_char_p),
        ("version", c_char_p),
        ("library_path", c_char_p),
        ("default_arch", c_char_p),
        # ---- end of version 1 (ABI 1.0) ----
    ]


class Stats(Structure):
    """``hipacm_stats`` (version 2, ABI 1.5).

    A plugin of ABI 1.4 fills version 1 only; the remote counters then stay 0.
    """

    _fields_ = [
        ("struct_size", c_size_t),
        ("compiles", c_uint64),
        ("compile_failures", c_uint64),
        ("cache_hits", c_uint64),
        ("cache_misses", c_uint64),
        ("cache_stores", c_uint64),
        ("bytes_stored", c_uint64),
        ("cache_evictions", c_uint64),
        ("bytes_evicted", c_uint64),
        ("worker_spawns", c_uint64),
        ("worker_crashes", c_uint64),
        ("timeouts", c_uint64),
        ("cached_failures", c_uint64),
        # ---- end of version 1 (ABI 1.4) ----
        ("remote_hits", c_uint64),
        ("remote_misses", c_uint64),
        ("remote_refused", c_uint64),
        ("remote_stores", c_uint64),
        ("remote_duplicates", c_uint64),
        ("remote_store_failures", c_uint64),
        ("remote_errors", c_uint64),
        ("remote_waits", c_uint64),
        # ---- end of version 2 (ABI 1.5) ----
    ]


class ProviderV2(Structure):
    """``hipacm_provider`` (version 2, ABI 1.1), including ``mode_config_init_sized``:
    the oldest table these bindings load."""

    _fields_ = [
        ("struct_size", c_size_t),
        ("abi_version", c_uint32),
        ("name", c_char_p),
        ("version", c_char_p),
        ("mode_config_init", CFUNCTYPE(None, POINTER(ModeConfig))),
        ("mode_enter", CFUNCTYPE(c_status, POINTER(ModeConfig), POINTER(c_mode_p))),
        ("mode_exit", CFUNCTYPE(c_status, c_mode_p, POINTER(c_future_p))),
        ("active_mode", CFUNCTYPE(c_mode_p)),
        ("submit", CFUNCTYPE(c_status, c_mode_p, POINTER(Request), POINTER(c_future_p))),
        ("compile", CFUNCTYPE(c_status, POINTER(Request), c_char_p, POINTER(c_future_p))),
        ("future_wait", CFUNCTYPE(c_status, c_future_p, c_int64)),
        ("future_status", CFUNCTYPE(c_status, c_future_p)),
        ("future_result", CFUNCTYPE(c_status, c_future_p, POINTER(POINTER(Kernel)))),
        ("future_key", CFUNCTYPE(c_char_p, c_future_p)),
        ("future_log", CFUNCTYPE(c_char_p, c_future_p)),
        ("future_error_message", CFUNCTYPE(c_char_p, c_future_p)),
        ("future_retain", CFUNCTYPE(c_status, c_future_p)),
        ("future_release", CFUNCTYPE(c_status, c_future_p)),
        ("status_string", CFUNCTYPE(c_char_p, c_status)),
        ("last_error_message", CFUNCTYPE(c_char_p)),
        ("get_backend_info", CFUNCTYPE(c_status, POINTER(BackendInfo))),
        # ---- end of version 1 (ABI 1.0) ----
        ("mode_config_init_sized", CFUNCTYPE(None, POINTER(ModeConfig), c_size_t)),
        # ---- end of version 2 (ABI 1.1) ----
    ]


class Provider(Structure):
    """``hipacm_provider`` (version 3, ABI 1.4): with ``set_log_callback`` and ``get_stats``.

    Read only from a plugin whose table's ``struct_size`` covers it; an older
    plugin's table is read as :class:`ProviderV2`.
    """

    _fields_ = ProviderV2._fields_ + [
        ("set_log_callback", CFUNCTYPE(c_status, LOG_FN, c_void_p, c_int32)),
        ("get_stats", CFUNCTYPE(c_status, POINTER(Stats))),
        # ---- end of version 3 (ABI 1.4) ----
    ]


PROVIDER_V1_SIZE = ProviderV2.mode_config_init_sized.offset
#: The entries each table version adds past ``name`` and ``version``.
PROVIDER_V2_ENTRIES = [name for name, _ in ProviderV2._fields_[4:]]
PROVIDER_V3_ENTRIES = [name for name, _ in Provider._fields_[len(ProviderV2._fields_):]]

GET_PROVIDER_FN = CFUNCTYPE(c_void_p, c_uint32)


def library_candidates() -> List[Tuple[str, str]]:
    """The places searched for the plugin, in order, as ``(how, path)`` pairs."""
    package_dir = Path(__file__).resolve().parent
    found: List[Tuple[str, str]] = []
    beside = package_dir / SONAME
    if beside.is_file():
        found.append(("beside the package", str(beside)))
    # Nothing from the directories above the package: a checkout's build tree looks the same
    # as one that another user planted above a package in a shared directory (a venv under
    # /tmp), and loading a library runs its code. A checkout sets $HIPACM_LIBRARY instead.
    system = ctypes.util.find_library("hipacm")
    found.append(("system loader", system or SONAME))
    return found


class LoadedPlugin:
    """The loaded library and its provider table (a private singleton)."""

    def __init__(self, cdll: ctypes.CDLL, path: str,
                 provider: Union[Provider, ProviderV2]) -> None:
        self.cdll = cdll  # keeps the library referenced; it is -z nodelete anyway
        self.path = path
        self.provider = provider
        self.abi_version: int = provider.abi_version  # as granted: encoded, or a plain 1
        self.name: str = (provider.name or b"").decode()
        self.version: str = (provider.version or b"").decode()
        self.struct_size: int = provider.struct_size
        #: True when the table has ABI 1.4's set_log_callback and get_stats.
        self.has_abi_1_4 = isinstance(provider, Provider)
        #: True when the plugin granted ABI 1.5 or newer: it reads
        #: hipacm_mode_config.remote_cache and fills hipacm_stats's remote counters. The
        #: table itself did not grow in 1.5, so only the granted version tells.
        self.has_abi_1_5 = (self.abi_version >> 16 == ABI_VERSION_MAJOR
                            and self.abi_version & 0xFFFF >= 5)

    @property
    def abi_text(self) -> str:
        """The granted ABI as "major.minor" (a plain major number reads as "1.x", x < 3)."""
        if self.abi_version >> 16:
            return f"{self.abi_version >> 16}.{self.abi_version & 0xFFFF}"
        return f"{self.abi_version}.x"


def _open_provider(path: str) -> LoadedPlugin:
    """dlopens ``path`` and validates its provider table; raises ImportError."""
    try:
        cdll = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as exc:
        raise ImportError(f"hipacm: cannot load {path}: {exc}") from exc
    try:
        raw = cdll["hipacm_get_provider"]
    except AttributeError as exc:
        raise ImportError(
            f"hipacm: {path} does not export hipacm_get_provider; it is not the hipacm plugin"
        ) from exc
    raw_address = ctypes.cast(raw, c_void_p).value
    assert raw_address is not None  # dlsym found it
    get_provider = GET_PROVIDER_FN(raw_address)
    requested = ABI_VERSION
    address = get_provider(requested)
    if not address:
        # A plugin older than ABI 1.3 answers only the plain major number.
        requested = ABI_VERSION_MAJOR
        address = get_provider(requested)
    if not address:
        raise ImportError(
            f"hipacm: {path} does not implement ABI major version {ABI_VERSION_MAJOR} "
            "(hipacm_get_provider returned NULL)"
        )
    size = c_size_t.from_address(address).value
    if size < PROVIDER_V1_SIZE:
        raise ImportError(
            f"hipacm: {path} has a provider table of {size} bytes, smaller than ABI 1.0's "
            f"{PROVIDER_V1_SIZE}; the library is corrupt or not the hipacm plugin"
        )
    abi = c_uint32.from_address(address + Provider.abi_version.offset).value
    if requested == ABI_VERSION_MAJOR and abi != ABI_VERSION_MAJOR:
        raise ImportError(
            f"hipacm: {path} reports ABI version {abi}, these bindings need {ABI_VERSION_MAJOR}"
        )
    if requested == ABI_VERSION and abi >> 16 != ABI_VERSION_MAJOR:
        raise ImportError(
            f"hipacm: {path} reports ABI version {abi >> 16}.{abi & 0xFFFF} for a request of "
            f"{ABI_VERSION_MAJOR}.{ABI_VERSION_MINOR}"
        )
    if size < ctypes.sizeof(ProviderV2):
        raise ImportError(
            f"hipacm: {path} implements ABI {ABI_VERSION_MAJOR}.0 (provider table of {size} "
            f"bytes); these bindings need ABI {ABI_VERSION_MAJOR}.{ABI_VERSION_MINOR_REQUIRED} "
            f"({ctypes.sizeof(ProviderV2)} bytes, with mode_config_init_sized). "
            "Rebuild or upgrade libhipacm."
        )
    # Static and owned by the plugin; never read past the size it reports.
    provider: Union[Provider, ProviderV2]
    entries = list(PROVIDER_V2_ENTRIES)
    if size >= ctypes.sizeof(Provider):
        provider = Provider.from_address(address)
        entries += PROVIDER_V3_ENTRIES
    else:
        provider = ProviderV2.from_address(address)
    missing = [name for name in entries if not getattr(provider, name)]
    if missing:
        raise ImportError(f"hipacm: {path}'s provider table has NULL entries: {missing}")
    return LoadedPlugin(cdll, path, provider)


def load_plugin() -> LoadedPlugin:
    """Finds and loads ``libhipacm.so.1``.

    Search order: ``$HIPACM_LIBRARY``; ``libhipacm.so.1`` beside this package
    then the system loader. Directories above the
    package are never searched: whoever can write one could plant a library.

    Raises:
        ImportError: nothing loadable was found, or the library found does not
            provide ABI 1.1 or newer of major version 1.
    """
    explicit = os.environ.get("HIPACM_LIBRARY")
    if explicit:
        # An explicit choice is never silently replaced by another library.
        return _open_provider(explicit)
    errors: List[str] = []
    for how, path in library_candidates():
        try:
            return _open_provider(path)
        except ImportError as exc:
            errors.append(f"  {how}: {exc}")
    raise ImportError(
        "hipacm: cannot find a usable libhipacm.so.1. Set HIPACM_LIBRARY to its path "
        "(in a checkout: build/release/libhipacm.so.1), copy it beside the hipacm package, "
        "or install it on the library path.\n"
        + "\n".join(errors)
    )


def optional_str(value: Optional[bytes]) -> str:
    """Decodes a C string returned by the plugin (NULL becomes "")."""
    if not value:
        return ""
    return value.decode("utf-8", errors="replace")
