# SPDX-License-Identifier: MIT
"""The ctypes structs mirror include/hipacm/hipacm.h byte for byte (checked with a C compiler)."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from hipacm import _core, _ffi

REPO = Path(__file__).resolve().parents[3]
HEADER_DIR = REPO / "include"
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

STRUCTS = {
    "hipacm_mode_config": _ffi.ModeConfig,
    "hipacm_request": _ffi.Request,
    "hipacm_kernel": _ffi.KernelWithCache,
    "hipacm_backend_info": _ffi.BackendInfo,
    "hipacm_provider": _ffi.Provider,
    "hipacm_stats": _ffi.Stats,
}

# sizeof of each struct (LP64) in the header of each ABI 1.x minor: the
# changelog of docs/ABI.md, as numbers. 1.3 added no struct field; 1.4 added
# hipacm_stats (None: not in that minor's header); 1.5 grew it and the config.
_V0 = {"hipacm_mode_config": 32, "hipacm_request": 112, "hipacm_kernel": 72,
       "hipacm_backend_info": 48, "hipacm_provider": 168, "hipacm_stats": None}
_V1 = dict(_V0, hipacm_mode_config=40, hipacm_provider=176)
_V2 = dict(_V1, hipacm_mode_config=56, hipacm_kernel=112)
_V4 = dict(_V2, hipacm_mode_config=64, hipacm_provider=192, hipacm_stats=104)
_V5 = dict(_V4, hipacm_mode_config=72, hipacm_stats=168)
SIZES_BY_MINOR = {0: _V0, 1: _V1, 2: _V2, 3: _V2, 4: _V4, 5: _V5}

needs_cc = pytest.mark.skipif(CC is None or not (HEADER_DIR / "hipacm" / "hipacm.h").is_file(),
                              reason="no C compiler or no header")


def run_c(tmp_path, printfs):
    """Compiles and runs a C99 program that prints ``printfs`` against the header;
    returns {(first, second word): number} of its lines."""
    lines = ["#include <hipacm/hipacm.h>", "#include <stddef.h>", "#include <stdio.h>",
             "int main(void) {"] + [f"  {p}" for p in printfs] + ["  return 0;", "}"]
    src = tmp_path / "facts.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "facts"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", f"-I{HEADER_DIR}", str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


@needs_cc
def test_struct_layouts_match_the_c_header(tmp_path):
    printfs = []
    for cname, py in STRUCTS.items():
        printfs.append(f'printf("{cname} sizeof %zu\\n", sizeof({cname}));')
        for field, _ in py._fields_:
            printfs.append(f'printf("{cname} {field} %zu\\n", offsetof({cname}, {field}));')
    c_layout = run_c(tmp_path, printfs)
    py_layout = {}
    for cname, py in STRUCTS.items():
        py_layout[(cname, "sizeof")] = ctypes.sizeof(py)
        for field, _ in py._fields_:
            py_layout[(cname, field)] = getattr(py, field).offset
    assert py_layout == c_layout


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the sizes are LP64's")
def test_declared_minor_is_the_one_whose_structs_are_mirrored():
    mirrored = {cname: ctypes.sizeof(py) for cname, py in STRUCTS.items()}
    assert mirrored == SIZES_BY_MINOR[_ffi.ABI_VERSION_MINOR]
    assert _ffi.ABI_VERSION_MINOR_REQUIRED <= _ffi.ABI_VERSION_MINOR


@needs_cc
def test_declared_version_matches_the_header_macros(tmp_path):
    facts = run_c(tmp_path, [
        'printf("abi major %d\\n", HIPACM_ABI_VERSION_MAJOR);',
        'printf("abi minor %d\\n", HIPACM_ABI_VERSION_MINOR);',
        'printf("abi version %lu\\n", (unsigned long)HIPACM_ABI_VERSION);',
        f'printf("abi encoded %lu\\n", (unsigned long)HIPACM_ABI_VERSION_ENCODE(1, '
        f'{_ffi.ABI_VERSION_MINOR}));',
        'printf("cache off %d\\n", HIPACM_CACHE_OFF);',
        'printf("cache read %d\\n", HIPACM_CACHE_READ);',
        'printf("cache readwrite %d\\n", HIPACM_CACHE_READWRITE);',
        'printf("load none %d\\n", HIPACM_LOAD_NONE);',
        'printf("log off %d\\n", HIPACM_LOG_OFF);',
        'printf("log error %d\\n", HIPACM_LOG_ERROR);',
        'printf("log warning %d\\n", HIPACM_LOG_WARNING);',
        'printf("log info %d\\n", HIPACM_LOG_INFO);',
        'printf("log debug %d\\n", HIPACM_LOG_DEBUG);',
    ])
    assert facts[("abi", "major")] == _ffi.ABI_VERSION_MAJOR
    # The bindings may lag the header, never lead it; at the same minor they agree exactly.
    assert _ffi.ABI_VERSION_MINOR <= facts[("abi", "minor")]
    if _ffi.ABI_VERSION_MINOR == facts[("abi", "minor")]:
        assert _ffi.ABI_VERSION == facts[("abi", "version")]
    assert _ffi.ABI_VERSION == facts[("abi", "encoded")]
    assert (_ffi.CACHE_OFF, _ffi.CACHE_READ, _ffi.CACHE_READWRITE, _ffi.LOAD_NONE) == (
        facts[("cache", "off")], facts[("cache", "read")], facts[("cache", "readwrite")],
        facts[("load", "none")])
    assert [_ffi.LOG_OFF, _ffi.LOG_ERROR, _ffi.LOG_WARNING, _ffi.LOG_INFO, _ffi.LOG_DEBUG] == [
        facts[("log", name)] for name in ("off", "error", "warning", "info", "debug")]


def test_the_plugin_granted_the_encoded_request():
    granted = _core._plugin.abi_version
    assert granted >> 16 == _ffi.ABI_VERSION_MAJOR
    # A plugin of this tree knows every minor the bindings mirror.
    assert granted == _ffi.ABI_VERSION
    assert _core._plugin.struct_size >= ctypes.sizeof(_ffi.Provider)


def test_abi_1_4_entries_lie_past_version_2_of_the_provider_table():
    assert _ffi.Provider.set_log_callback.offset == ctypes.sizeof(_ffi.ProviderV2)
    assert _ffi.PROVIDER_V3_ENTRIES == ["set_log_callback", "get_stats"]
    assert _ffi.ModeConfig.cache_failures.offset == 56  # version 3's size
    assert _core._plugin.has_abi_1_4


def test_abi_1_5_fields_lie_past_the_1_4_structs():
    assert _ffi.ModeConfig.remote_cache.offset == 64  # version 4's size
    assert _ffi.Stats.remote_hits.offset == 104  # version 1's size
    assert [name for name, _ in _ffi.Stats._fields_[13:]] == [
        "remote_hits", "remote_misses", "remote_refused", "remote_stores", "remote_duplicates",
        "remote_store_failures", "remote_errors", "remote_waits"]
    assert _core._plugin.has_abi_1_5


def test_from_cache_field_lies_past_version_1_of_the_kernel():
    assert _ffi.KernelWithCache.from_cache.offset == ctypes.sizeof(_ffi.Kernel)
    assert _ffi.KERNEL_FROM_CACHE_END > ctypes.sizeof(_ffi.Kernel)
