# SPDX-License-Identifier: MIT
# conftest.py - runs the real hipacm binary for the CLI tests; paths come from CTest's environment.
import fcntl
import json
import os
import struct
import subprocess
import termios
from pathlib import Path

import pytest

CLI = os.environ.get("HIPACM_CLI", "")
EXAMPLES = Path(os.environ.get("HIPACM_EXAMPLES_DIR",
                               Path(__file__).resolve().parents[2] / "examples" / "kernels"))


class Result:
    def __init__(self, completed):
        self.rc = completed.returncode
        self.out = completed.stdout
        self.err = completed.stderr

    def json(self):
        return json.loads(self.out)


@pytest.fixture(scope="session")
def cli_path():
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.fail("set HIPACM_CLI to the built hipacm executable (CTest does)")
    return CLI


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


def base_env(cache):
    env = dict(os.environ)
    # Tests choose their own arch and isolation, run the build's worker, and never touch the user's
    # cache. Where workers come from (HIPACM_ISOLATION's service= part, which scripts/test.sh sets
    # to off) stays the runner's.
    service = [part for part in env.get("HIPACM_ISOLATION", "").split(",")
               if part.startswith("service=")]
    for name in ("HIPACM_ARCH", "HIPACM_ISOLATION", "HIPACM_WORKER", "HIPACM_CACHE"):
        env.pop(name, None)
    if service:
        env["HIPACM_ISOLATION"] = service[-1]
    env["HIPACM_CACHE_DIR"] = str(cache)
    return env


def run_with_stderr_on_a_terminal(argv, env, columns=None):
    """Runs argv with stderr on a new terminal `columns` wide (None: the terminal reports 0) and
    stdout on a pipe: (its exit status, all it wrote to the terminal). Skips where no terminal
    can be opened."""
    import pty

    try:
        leader, follower = pty.openpty()
    except OSError as error:  # a root without /dev/pts mounted
        pytest.skip(f"no terminal can be opened here: {error}")
    try:
        if columns is not None:
            fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        completed = subprocess.run(argv, stdout=subprocess.PIPE, stderr=follower, env=env,
                                   timeout=600, check=False)
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    return completed.returncode, b"".join(chunks).decode()


@pytest.fixture
def run(cli_path, cache_dir):
    """run(*args, env=None, cwd=None) -> Result; stdout and stderr are pipes, so stderr is not a
    TTY. A variable that env maps to None is unset."""

    def _run(*args, env=None, timeout=600, cwd=None):
        full_env = base_env(cache_dir)
        runner_service = full_env.get("HIPACM_ISOLATION")
        for name, value in (env or {}).items():
            if value is None:
                full_env.pop(name, None)
            else:
                full_env[name] = value
        # A test's isolation word keeps the runner's service= part unless it gives its own.
        isolation = (env or {}).get("HIPACM_ISOLATION")
        if isolation and runner_service and "service=" not in isolation:
            full_env["HIPACM_ISOLATION"] = isolation + "," + runner_service
        completed = subprocess.run([cli_path, *map(str, args)], capture_output=True, text=True,
                                   env=full_env, timeout=timeout, check=False, cwd=cwd)
        return Result(completed)

    return _run


@pytest.fixture(scope="session")
def backend_usable(cli_path, tmp_path_factory):
    """Compiling tests need hipRTC and comgr; `hipacm doctor` says whether they are here."""
    env = base_env(tmp_path_factory.mktemp("cache"))
    completed = subprocess.run([cli_path, "doctor", "--json"], capture_output=True, text=True,
                               env=env, check=False)
    if completed.returncode != 0:
        pytest.skip("no compiler backend here: " + completed.stdout[-400:])
    return True


@pytest.fixture(scope="session")
def manifest():
    return json.loads((EXAMPLES / "manifest.json").read_text())


@pytest.fixture
def broken_kernel(tmp_path):
    path = tmp_path / "broken.hip"
    path.write_text('extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }\n')
    return path
