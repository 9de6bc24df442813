# SPDX-License-Identifier: MIT
"""Finding and validating libhipacm.so.1 (each case imports hipacm in a fresh interpreter)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hipacm

PACKAGE = Path(hipacm.__file__).resolve().parent
CC = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def import_hipacm(pythonpath, env_library=None, cwd=None):
    env = {k: v for k, v in os.environ.items() if k != "HIPACM_LIBRARY"}
    if env_library is not None:
        env["HIPACM_LIBRARY"] = str(env_library)
    env["PYTHONPATH"] = str(pythonpath)
    code = "import hipacm; print(hipacm.library_path)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=cwd or "/")


def test_explicit_library_that_does_not_exist_is_a_clear_import_error(tmp_path):
    proc = import_hipacm(PACKAGE.parent, tmp_path / "nope" / "libhipacm.so.1")
    assert proc.returncode != 0
    assert "ImportError: hipacm: cannot load" in proc.stderr, proc.stderr


def test_a_library_without_the_provider_symbol_is_rejected():
    libc = "libc.so.6"
    proc = import_hipacm(PACKAGE.parent, libc)
    assert proc.returncode != 0
    assert "does not export hipacm_get_provider" in proc.stderr, proc.stderr


FAKE_PROVIDER = r"""
#include <hipacm/hipacm.h>
#include <stddef.h>
static hipacm_provider table;
const hipacm_provider* hipacm_get_provider(uint32_t abi) {
  if (FAKE_NULL || abi != FAKE_REQUEST) return NULL;
  table.struct_size = FAKE_SIZE;
  table.abi_version = FAKE_ABI;
  return &table;
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler")
@pytest.mark.parametrize("request_, null, size, abi, message", [
    # Plugins older than ABI 1.3 answer only the plain major number.
    ("1", 1, "sizeof(hipacm_provider)", 1, "does not implement ABI major version 1"),
    ("1", 0, "offsetof(hipacm_provider, mode_config_init_sized)", 1, "implements ABI 1.0"),
    ("1", 0, "sizeof(hipacm_provider)", 2, "reports ABI version 2"),
    ("1", 0, "sizeof(size_t)", 1, "smaller than ABI 1.0"),
    # ABI 1.3 plugins answer the encoded request; an empty table passes the
    # version checks and is refused only for its NULL entries.
    ("HIPACM_ABI_VERSION", 0, "sizeof(hipacm_provider)", "HIPACM_ABI_VERSION",
     "provider table has NULL entries"),
    ("HIPACM_ABI_VERSION", 0, "sizeof(hipacm_provider)", "HIPACM_ABI_VERSION_ENCODE(2, 0)",
     "reports ABI version 2.0"),
])
def test_mismatched_provider_tables_are_import_errors(tmp_path, request_, null, size, abi,
                                                      message):
    src = tmp_path / "fake.c"
    src.write_text(FAKE_PROVIDER)
    lib = tmp_path / "libhipacm.so.1"
    include = Path(__file__).resolve().parents[3] / "include"
    subprocess.run([CC, "-shared", "-fPIC", f"-I{include}", f"-DFAKE_REQUEST={request_}",
                    f"-DFAKE_NULL={null}",
                    f"-DFAKE_SIZE={size}", f"-DFAKE_ABI={abi}", str(src), "-o", str(lib)],
                   check=True)
    proc = import_hipacm(PACKAGE.parent, lib)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and message in proc.stderr, proc.stderr


def copy_package(dest: Path) -> Path:
    shutil.copytree(PACKAGE, dest / "hipacm", ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
    return dest / "hipacm"


def test_library_beside_the_package_is_found(tmp_path):
    pkg = copy_package(tmp_path)
    os.symlink(hipacm.library_path, pkg / "libhipacm.so.1")
    proc = import_hipacm(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(pkg / "libhipacm.so.1")


PLANTED_LIBRARY = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
  const char* mark = getenv("PLANTED_MARK");
  if (mark) close(open(mark, O_WRONLY | O_CREAT, 0600));
}
"""


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_trust2_05_a_build_tree_above_the_package_is_never_loaded(tmp_path):
    # Another user's tree above a package in a shared directory (a venv under /tmp): it looks
    # like a checkout, with include/hipacm/hipacm.h and build/*/libhipacm.so.1.
    shared = tmp_path / "shared"
    (shared / "include" / "hipacm").mkdir(parents=True)
    (shared / "include" / "hipacm" / "hipacm.h").write_text("/* planted */\n")
    for build in ("release", "x"):
        (shared / "build" / build).mkdir(parents=True)
        src = tmp_path / "planted.c"
        src.write_text(PLANTED_LIBRARY)
        subprocess.run([CC, "-shared", "-fPIC", str(src), "-o",
                        str(shared / "build" / build / "libhipacm.so.1")], check=True)
    venv = shared / "venv" / "lib" / "site-packages"
    venv.mkdir(parents=True)
    copy_package(venv)
    mark = tmp_path / "planted-library-ran"
    env = {k: v for k, v in os.environ.items() if k not in ("HIPACM_LIBRARY", "LD_LIBRARY_PATH")}
    env.update(PYTHONPATH=str(venv), PLANTED_MARK=str(mark))
    code = ("import hipacm._ffi as f; print([p for _, p in f.library_candidates()]); "
            "import hipacm; print(hipacm.library_path)")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))
    assert not mark.exists(), "the planted library's constructor ran: " + proc.stdout + proc.stderr
    assert str(shared / "build") not in proc.stdout + proc.stderr
    # With nothing beside the package, only the system loader is left: it loads hipacm from the
    # library path or the import fails, naming the settings that would find it.
    if proc.returncode != 0:
        assert "ImportError" in proc.stderr and "HIPACM_LIBRARY" in proc.stderr, proc.stderr
