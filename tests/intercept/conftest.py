# SPDX-License-Identifier: MIT
# conftest.py - what the `hipacm run` tests share: the built tool, clients and manifests (paths from
# CTest's environment), the environment they run in, and the dumps' one normalisation.
import os
import re
import subprocess
from ctypes.util import find_library
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("HIPACM_CLI", "")
CLIENT_DIR = Path(os.environ.get("HIPACM_INTERCEPT_CLIENTS", ""))
PYTHON_CLIENT = ROOT / "tests" / "intercept" / "clients" / "ctypes_client.py"
FIXTURES = ROOT / "tests" / "fixtures" / "miopen_style" / "manifest.json"
OWN_KERNELS = ROOT / "tests" / "intercept" / "clients" / "kernels" / "manifest.json"
MANIFESTS = [str(FIXTURES), str(OWN_KERNELS)]
SHIM_NAME = "libhipacm_intercept.so"
# The soname the dlopen and Python clients load, as the dynamic linker's cache lists it: hipRTC's
# own library where there is one (ROCm 6 and later), else the HIP runtime that exports it (ROCm 5).
HIPRTC_SONAME = find_library("hiprtc") or find_library("amdhip64") or "libamdhip64.so.5"

# hipRTC's failure logs name the source as comgr wrote it:
# "$TMPDIR/comgr-XXXXXX/input/CompileSource", with six random hex digits that differ in every
# compile. Those six alone are replaced; the rest of the log, the directory included, must match
# exactly. (ROCm 7's comgr-PID-N-XXXXXX also carries the process id and comgr's count of its
# directories in that process, which differ between two processes and with the order in which
# threads compile: replaced as well.)
COMGR_RANDOM = re.compile(r"/comgr-(\d+-\d+-)?[0-9a-f]{6}/")


def starts_here(binary):
    """Whether the dynamic linker finds every library `binary` needs on this machine."""
    listed = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False)
    return listed.returncode == 0 and "not found" not in listed.stdout


# The client linked against hipRTC is built against this machine's ROCm (Debian 12's
# libamdhip64.so.5). In a root of another ROCm release (scripts/rocm-matrix.sh) it cannot start;
# there the dlopen client, which loads that release's libhiprtc.so.N, is the reference instead.
LINKED = "linked" if starts_here(CLIENT_DIR / "hipacm_intercept_linked_client") else "dlopen"


def canonical(dump):
    return COMGR_RANDOM.sub(
        lambda found: "/comgr-PID-N-XXXXXX/" if found.group(1) else "/comgr-XXXXXX/", dump)


def base_env(cache_dir):
    """The runner's environment for one test: its own cache (the suite turns the cache off), its
    own TMPDIR left as is, and the runner's service= part of HIPACM_ISOLATION kept."""
    env = dict(os.environ)
    service = [part for part in env.get("HIPACM_ISOLATION", "").split(",")
               if part.startswith("service=")]
    for name in ("HIPACM_ISOLATION", "HIPACM_WORKER", "HIPACM_CACHE", "HIPACM_RUN_STATS",
                 "LD_PRELOAD"):
        env.pop(name, None)
    if service:
        env["HIPACM_ISOLATION"] = service[-1]
    env["HIPACM_CACHE_DIR"] = str(cache_dir)
    return env


@pytest.fixture(scope="session")
def cli():
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.fail("set HIPACM_CLI to the built hipacm executable (CTest does)")
    return CLI


@pytest.fixture(scope="session")
def shim(cli):
    """The intercept library of this build: the tests that need it fail, loudly, without it."""
    path = Path(cli).resolve().parent / SHIM_NAME
    if not path.is_file():
        pytest.fail(f"{path} is missing: build the hipacm_intercept target")
    return path


@pytest.fixture
def env(tmp_path):
    return base_env(tmp_path / "cache")


def client_command(kind, *args, manifests=MANIFESTS):
    """The argv of one client: linked, dlopen or python."""
    if kind != "linked":
        args = ("--library", HIPRTC_SONAME, *args)
    if kind == "python":
        return ["/usr/bin/python3", str(PYTHON_CLIENT), *args, *manifests]
    binary = CLIENT_DIR / f"hipacm_intercept_{kind}_client"
    if not os.access(binary, os.X_OK):
        pytest.fail(f"{binary} is missing: set HIPACM_INTERCEPT_CLIENTS (CTest does)")
    return [str(binary), *args, *manifests]


def run(argv, env, timeout=300, check=True, **kwargs):
    completed = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                               check=False, **kwargs)
    if check and completed.returncode != 0:
        pytest.fail(f"{argv} exited {completed.returncode}\nstdout:\n{completed.stdout[-2000:]}"
                    f"\nstderr:\n{completed.stderr[-4000:]}")
    return completed
