# SPDX-License-Identifier: MIT
"""The package installs offline with pip and the setuptools backend alone, as the READMEs
say, and scripts/build-wheel.sh makes a platform wheel that runs in a clean environment."""

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import hipacm

SOURCE = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("pip", "setuptools", "wheel")),
                    reason="needs pip, setuptools and wheel (python3-pip, python3-setuptools, python3-wheel)")
def test_pip_install_offline_without_build_isolation(tmp_path):
    src = tmp_path / "src"  # a copy: in-tree builds would litter the checkout
    shutil.copytree(SOURCE, src, ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__", "*.so*", "hipacm-worker"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation",
                    "--no-index", "--no-deps", "--disable-pip-version-check",
                    "--target", str(target), str(src)], check=True, timeout=300)
    assert (target / "hipacm" / "py.typed").is_file()
    assert not list((target / "hipacm").glob("*.so*"))
    env = dict(os.environ, PYTHONPATH=str(target), HIPACM_LIBRARY=hipacm.library_path)
    code = ("import hipacm; print(hipacm.__file__); "
            "print(hipacm.compile('extern \"C\" __global__ void k(int* p) { *p = 1; }', "
            "arch='gfx90a').code[:4])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=str(tmp_path), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(target / "hipacm" / "__init__.py"), "b'\\x7fELF'"]


REPO = SOURCE.parents[1]
IN_CI = os.environ.get("CI") == "true"
# Any download attempt fails at once instead of reaching a network.
OFFLINE = {"PIP_INDEX_URL": "http://127.0.0.1:9/", "PIP_NO_INDEX": "1",
           "http_proxy": "http://127.0.0.1:9/", "https_proxy": "http://127.0.0.1:9/",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def skip_or_fail(reason):
    """Outside CI a missing prerequisite skips; CI must run every packaging test."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: this test must run)")
    pytest.skip(reason)


def readme_block(path: Path, heading: str) -> list:
    """The lines of the first ```sh block after ``heading`` in ``path``."""
    text = path.read_text()
    start = text.index(heading)
    block = text[text.index("```sh\n", start) + len("```sh\n"):]
    return [line for line in block[:block.index("```")].splitlines() if line.strip()]


def test_the_readme_install_lines_work_offline_in_a_fresh_venv(tmp_path):
    lines = readme_block(SOURCE / "README.md", "## Install")
    assert lines == readme_block(REPO / "README.md", "## From Python and Rust"), \
        "README.md and bindings/python/README.md give different install lines"
    assert any("pip install" in line for line in lines), lines
    if not (SOURCE.parent / "python").is_dir() or shutil.which("bash") is None:
        skip_or_fail("needs bash")
    # A copy of the tree's package where the README's relative path expects it.
    shutil.copytree(SOURCE, tmp_path / "bindings" / "python", ignore=shutil.ignore_patterns(
        "tests", "build", "dist", "*.egg-info", "__pycache__", "*.so*", "hipacm-worker",
        ".mypy_cache"))
    # The README speaks of Debian's python3; this interpreter is the one the tests use.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    env = dict(os.environ, **OFFLINE)
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    env.pop("PYTHONPATH", None)
    for line in lines:
        proc = subprocess.run(["bash", "-c", line], cwd=str(tmp_path), env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, (line, proc.stdout, proc.stderr)
    python = tmp_path / ".venv" / "bin" / "python"
    code = ("import hipacm; print(hipacm.__file__); print(hipacm.compile("
            "'extern \"C\" __global__ void k(int* p) { *p = 1; }', arch='gfx90a').code[:4])")
    env["HIPACM_LIBRARY"] = hipacm.library_path
    proc = subprocess.run([str(python), "-c", code], cwd="/", env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    installed, magic = proc.stdout.splitlines()
    assert installed.startswith(str(tmp_path / ".venv" / "lib")), installed
    assert magic == "b'\\x7fELF'"


def build_dir() -> Path:
    """The build tree whose binaries the wheel bundles: the loaded library's."""
    return Path(hipacm.library_path).resolve().parent


WHEEL_CHECK = r"""
import os, signal, struct, sys, time
import hipacm
print("library", hipacm.library_path)
bundled = os.path.join(os.path.dirname(hipacm.library_path), "hipacm-worker")
services = []
with hipacm.AsyncCompileMode(arch="gfx90a", isolation="process") as mode:
    future = mode.submit(None, 'extern "C" __global__ void k(int* p) { *p = 1; }')
    kernel = future.result()
    # The plugin's worker pool keeps its processes. Name the binary of each child and, since by
    # default the workers come from the user's compile service (run from the same binary, so its
    # workers too), of every process that runs the bundled worker.
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            exe = os.readlink(f"/proc/{pid}/exe")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if ppid == os.getpid():
            print("child", exe)
        elif exe == bundled:
            print("worker", exe)
        if exe == bundled and argv[1:2] == [b"--service"]:
            services.append(int(pid))
code = kernel.code
print("elf", code[:4] == b"\x7fELF", struct.unpack_from("<H", code, 18)[0], kernel.arch)
print("env", sorted(k for k in os.environ if k.startswith("HIPACM") or k.startswith("LD_")))
# Nothing of this check outlives it: the service it started goes (SIGTERM ends one cleanly).
for pid in services:
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
deadline = time.monotonic() + 10
while any(os.path.exists(f"/proc/{pid}") for pid in services) and time.monotonic() < deadline:
    time.sleep(0.02)
"""


def test_the_platform_wheel_bundles_everything_and_runs_in_a_clean_environment(tmp_path):
    build = build_dir()
    missing = [n for n in ("libhipacm.so.1", "hipacm-worker", "hipacm") if not (build / n).exists()]
    if missing:
        skip_or_fail(f"the build tree {build} lacks {missing}")
    if shutil.which("patchelf") is None:
        skip_or_fail("needs patchelf (Debian: patchelf)")
    if any(importlib.util.find_spec(m) is None for m in ("pip", "setuptools", "wheel", "venv")):
        skip_or_fail("needs pip, setuptools, wheel and venv")
    out = tmp_path / "dist"
    env = dict(os.environ, **OFFLINE)
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build-wheel.sh"), str(out), str(build)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    wheel = wheels[0]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    assert wheel.name == f"hipacm-{hipacm.__version__}-py3-none-{platform}.whl"
    assert not wheel.name.endswith("-any.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        wheel_meta = zf.read(f"hipacm-{hipacm.__version__}.dist-info/WHEEL").decode()
    assert f"Tag: py3-none-{platform}" in wheel_meta
    for name in ("hipacm/libhipacm.so.1", "hipacm/hipacm-worker", "hipacm/hipacm",
                 "hipacm/_cli.py", "hipacm/py.typed"):
        assert name in names, name
    bundled = {n.split("/")[-1] for n in names if n.startswith("hipacm/.libs/")}
    assert any(n.startswith("libboost_thread") for n in bundled), bundled
    assert {"libsqlite3.so.0", "libnettle.so.8"} <= bundled, bundled
    assert not any(n.startswith(("libc.so", "libstdc++", "libgcc_s", "libm.so", "libamdhip64",
                                 "libhiprtc", "libamd_comgr")) for n in bundled), bundled

    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, timeout=300)
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-index",
                           str(wheel)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    package = site / "hipacm"
    home = tmp_path / "home"
    home.mkdir()
    # No HIPACM_* or LD_* variable, no PYTHONPATH: only what the wheel installed.
    clean = ["env", "-i", f"PATH={venv / 'bin'}:/usr/bin:/bin", f"HOME={home}"]
    proc = subprocess.run(clean + [str(venv / "bin" / "python"), "-c", WHEEL_CHECK],
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"library {package / 'libhipacm.so.1'}", lines
    # Isolation through the bundled worker: a child, or the compile service's (the default).
    worker = package / "hipacm-worker"
    assert f"child {worker}" in lines or f"worker {worker}" in lines, lines
    assert "elf True 224 gfx90a" in lines, lines
    assert lines[-1] == "env []", lines

    proc = subprocess.run(clean + ["hipacm", "--version"], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0] == (
        f"hipacm {hipacm.plugin_version} (ABI {hipacm.ABI_VERSION_MAJOR}.{hipacm.ABI_VERSION_MINOR}, "
        f"{package / 'libhipacm.so.1'})"), proc.stdout
    # Each bundled object resolves its libraries inside the package.
    proc = subprocess.run(["ldd", str(package / "libhipacm.so.1")], capture_output=True,
                          text=True, check=True)
    for line in proc.stdout.splitlines():
        if "libboost_thread" in line or "libsqlite3" in line or "libnettle" in line:
            assert str(package / ".libs") in line, line
