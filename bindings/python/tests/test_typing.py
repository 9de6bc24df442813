# SPDX-License-Identifier: MIT
"""The package passes mypy --strict, and a caller's typical code type-checks against it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_PARENT = Path(__file__).resolve().parents[1]

try:
    import mypy  # noqa: F401
    HAVE_MYPY = True
except ImportError:
    HAVE_MYPY = False

# result() is a Kernel without ignore_errors, and Optional[Kernel] with it.
CALLER = '''
from typing import Optional
import hipacm

def warm(source: str) -> bytes:
    with hipacm.AsyncCompileMode(arch="gfx90a", cache_failures=True) as mode:
        future = mode.submit(None, source)
    code: bytes = future.result().code
    maybe: Optional[hipacm.Kernel] = future.result(ignore_errors=True)
    counters: hipacm.Stats = hipacm.stats()
    hipacm.set_log_level("DEBUG")
    return code + bytes(counters.compiles) + (maybe.code if maybe else b"")
'''

MISUSE = '''
import hipacm

def size(future: hipacm.FutureKernel) -> int:
    return len(future.result(ignore_errors=True).code)
'''


def mypy(tmp_path, *targets):
    if not HAVE_MYPY:
        if os.environ.get("CI") == "true":
            pytest.fail("mypy is not installed (Debian: mypy); CI needs it")
        pytest.skip("mypy is not installed (Debian: mypy)")
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                           "--cache-dir", str(tmp_path / "cache"), *targets],
                          cwd=str(PACKAGE_PARENT), capture_output=True, text=True, timeout=600)


def test_the_package_passes_mypy_strict(tmp_path):
    proc = mypy(tmp_path, "-p", "hipacm")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_caller_code_type_checks_and_a_missing_none_check_does_not(tmp_path):
    good = tmp_path / "caller.py"
    good.write_text(CALLER)
    proc = mypy(tmp_path, str(good))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "misuse.py"
    bad.write_text(MISUSE)
    proc = mypy(tmp_path, str(bad))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'Item "None" of "Optional[Kernel]" has no attribute "code"' in proc.stdout, proc.stdout
