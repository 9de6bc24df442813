"""The ctypes structs mirror include/hipacm/hipacm.h byte for byte (checked with a C compiler)."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

from hipacm import _ffi

REPO = Path(__file__).resolve().parents[3]
HEADER_DIR = REPO / "include"
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")

STRUCTS = {
    "hipacm_mode_config": _ffi.ModeConfig,
    "hipacm_request": _ffi.Request,
    "hipacm_kernel": _ffi.KernelWithCache,
    "hipacm_backend_info": _ffi.BackendInfo,
    "hipacm_provider": _ffi.Provider,
}


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.skipif(not (HEADER_DIR / "hipacm" / "hipacm.h").is_file(), reason="no header")
def test_struct_layouts_match_the_c_header(tmp_path):
    lines = ["#include <hipacm/hipacm.h>", "#include <stddef.h>", "#include <stdio.h>",
             "int main(void) {"]
    for cname, py in STRUCTS.items():
        lines.append(f'  printf("{cname} sizeof %zu\\n", sizeof({cname}));')
        for field, _ in py._fields_:
            lines.append(f'  printf("{cname} {field} %zu\\n", offsetof({cname}, {field}));')
    lines += ["  return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", f"-I{HEADER_DIR}", str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    c_layout = {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}
    py_layout = {}
    for cname, py in STRUCTS.items():
        py_layout[(cname, "sizeof")] = ctypes.sizeof(py)
        for field, _ in py._fields_:
            py_layout[(cname, field)] = getattr(py, field).offset
    assert py_layout == c_layout


def test_from_cache_field_lies_past_version_1_of_the_kernel():
    assert _ffi.KernelWithCache.from_cache.offset == ctypes.sizeof(_ffi.Kernel)
    assert _ffi.KERNEL_FROM_CACHE_END > ctypes.sizeof(_ffi.Kernel)
