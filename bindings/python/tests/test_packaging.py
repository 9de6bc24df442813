# SPDX-License-Identifier: MIT
"""The package installs offline with pip and the setuptools backend alone, as the READMEs
say, and scripts/build-wheel.sh makes a platform wheel that runs in a clean environment."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
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


@pytest.fixture(scope="module")
def platform_wheel(tmp_path_factory):
    """The wheel scripts/build-wheel.sh makes from the loaded library's build tree, built once."""
    build = build_dir()
    missing = [n for n in ("libhipacm.so.1", "hipacm-worker", "hipacm") if not (build / n).exists()]
    if missing:
        skip_or_fail(f"the build tree {build} lacks {missing}")
    if shutil.which("patchelf") is None:
        skip_or_fail("needs patchelf (Debian: patchelf)")
    if any(importlib.util.find_spec(m) is None for m in ("pip", "setuptools", "wheel", "venv")):
        skip_or_fail("needs pip, setuptools, wheel and venv")
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, **OFFLINE)
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build-wheel.sh"), str(out), str(build)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheels = list(out.glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def readelf_needs(path: Path) -> set:
    """The version names in the ELF file's version-needs section, as binutils' readelf reads
    them (independent of the wheel build's own reader, wheel_support.py)."""
    out = subprocess.run(["readelf", "--version-info", "--wide", str(path)], capture_output=True,
                         text=True, check=True).stdout
    section = out[out.index("Version needs section"):] if "Version needs section" in out else ""
    return set(re.findall(r"Name: (\S+)\s+Flags:", section))


def highest_version(names, prefix: str) -> tuple:
    found = [tuple(int(n) for n in name[len(prefix):].split("."))
             for name in names if re.fullmatch(re.escape(prefix) + r"[0-9.]+", name)]
    return max(found, default=())


def wheel_elf_files(wheel: Path, into: Path) -> list:
    """Every ELF file in the wheel, extracted under ``into``."""
    files = []
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if zf.read(name)[:4] == b"\x7fELF":
                files.append(Path(zf.extract(name, into)))
    return files


def test_the_wheel_is_tagged_manylinux_at_the_glibc_floor_of_its_elf_files(platform_wheel,
                                                                            tmp_path):
    if shutil.which("readelf") is None:
        skip_or_fail("needs readelf (Debian: binutils)")
    elves = wheel_elf_files(platform_wheel, tmp_path)
    names = {p.name for p in elves}
    assert {"libhipacm.so.1", "hipacm-worker", "hipacm"} <= names, names
    needs = set().union(*(readelf_needs(p) for p in elves))
    glibc = highest_version(needs, "GLIBC_")
    assert len(glibc) >= 2, needs
    tag = f"py3-none-manylinux_{glibc[0]}_{glibc[1]}_x86_64"
    assert platform_wheel.name == f"hipacm-{hipacm.__version__}-{tag}.whl"
    with zipfile.ZipFile(platform_wheel) as zf:
        wheel_meta = zf.read(f"hipacm-{hipacm.__version__}.dist-info/WHEEL").decode().splitlines()
    assert f"Tag: {tag}" in wheel_meta, wheel_meta
    assert [line for line in wheel_meta if line.startswith("Tag:")] == [f"Tag: {tag}"]
    # Native code: installed to platlib.
    assert "Root-Is-Purelib: false" in wheel_meta, wheel_meta
    # The C++ runtime comes from the system (manylinux lets a wheel assume the libstdc++ of its
    # level's reference distribution): what it needs is named, never bundled.
    assert highest_version(needs, "GLIBCXX_") >= (3, 4), needs
    assert not any(n.startswith(("libstdc++", "libgcc_s", "libc.so")) for n in names), names


def test_the_wheel_metadata_names_every_licence_it_bundles(platform_wheel):
    dist_info = f"hipacm-{hipacm.__version__}.dist-info"
    with zipfile.ZipFile(platform_wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        licences = {n[len(f"{dist_info}/licenses/"):]: zf.read(n).decode("utf-8", "replace")
                    for n in names if n.startswith(f"{dist_info}/licenses/")}
    head = metadata.partition("\n\n")[0].splitlines()
    fields = [line.partition(": ") for line in head]
    assert head[0] == "Metadata-Version: 2.4", head
    assert [v for k, _, v in fields if k == "Requires-Python"] == [">=3.8"], head
    assert not [line for line in head if line.startswith("License:")], head
    expression = [v for k, _, v in fields if k == "License-Expression"]
    license_files = [v for k, _, v in fields if k == "License-File"]
    # Every License-File is in .dist-info/licenses/, and nothing else is there.
    assert sorted(license_files) == sorted(licences), (license_files, sorted(licences))
    assert "LICENSE" in licences and "MIT License" in licences["LICENSE"]

    bundled = sorted(n.split("/")[-1] for n in names if n.startswith("hipacm/.libs/"))
    assert bundled, names
    index = [line.split("\t") for line in licences["third-party/BUNDLED"].splitlines()
             if line and not line.startswith("#")]
    assert sorted(row[0] for row in index) == bundled, (index, bundled)
    terms = {"MIT"}
    for soname, package, version, licence in index:
        text = licences[f"third-party/{licence}"]
        # A Debian machine-readable copyright file, or at least a copyright text.
        assert "Copyright" in text or "copyright" in text, (soname, licence)
        if soname.startswith("libboost_"):
            assert "Boost Software License" in text, licence
            terms.add("BSL-1.0")
        elif soname.startswith("libsqlite3"):
            assert "public-domain" in text or "public domain" in text.lower(), licence
            terms.add("blessing")
        elif soname.startswith("libnettle"):
            assert "LGPL-3+" in text or "Lesser General Public License" in text, licence
            terms.add("(LGPL-3.0-or-later OR GPL-2.0-or-later)")
        elif soname.startswith("libfmt"):
            terms.add("MIT")
        elif soname.startswith("libhiredis"):
            assert "BSD-3-Clause" in text, licence
            terms.add("BSD-3-Clause")
        else:
            pytest.fail(f"{soname} is bundled and this test knows no licence for it")
        assert package and version, (soname, package, version)
    assert len(expression) == 1, head
    assert set(expression[0].split(" AND ")) == terms, (expression, terms)
    assert expression[0].startswith("MIT AND "), expression


def test_the_platform_wheel_bundles_everything_and_runs_in_a_clean_environment(platform_wheel,
                                                                                tmp_path):
    wheel = platform_wheel
    env = dict(os.environ, **OFFLINE)
    assert not wheel.name.endswith("-any.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for name in ("hipacm/libhipacm.so.1", "hipacm/hipacm-worker", "hipacm/hipacm",
                 "hipacm/_cli.py", "hipacm/py.typed"):
        assert name in names, name
    bundled = {n.split("/")[-1] for n in names if n.startswith("hipacm/.libs/")}
    assert any(n.startswith("libboost_thread") for n in bundled), bundled
    assert {"libsqlite3.so.0", "libnettle.so.8"} <= bundled, bundled
    assert not any(n.startswith(("libc.so", "libstdc++", "libgcc_s", "libm.so", "libamdhip64",
                                 "libhiprtc", "libamd_comgr")) for n in bundled), bundled
    # Build helpers stay out of the installed package.
    assert not any(n.endswith("wheel_support.py") or n.startswith("third-party/") for n in names)

    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True, timeout=300)
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-index",
                           str(wheel)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
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


def test_the_wheel_builds_elf_reader_agrees_with_readelf_and_stays_in_bounds(tmp_path):
    import wheel_support

    library = Path(hipacm.library_path).resolve()
    if shutil.which("readelf") is None:
        skip_or_fail("needs readelf (Debian: binutils)")
    machine, needed = wheel_support.needed_versions(library)
    assert machine == "x86_64"
    assert set().union(*needed.values()) == readelf_needs(library)
    assert "libc.so.6" in needed
    data = library.read_bytes()
    # Cut or damaged copies: a result or ElfError, never another exception or a read past the end.
    damaged = tmp_path / "damaged.so"
    for size in range(0, len(data), max(1, len(data) // 97)):
        damaged.write_bytes(data[:size])
        try:
            wheel_support.needed_versions(damaged)
        except wheel_support.ElfError:
            pass
    for offset in range(0, min(len(data), 4096), 61):
        damaged.write_bytes(data[:offset] + bytes([data[offset] ^ 0xFF]) + data[offset + 1:])
        try:
            wheel_support.needed_versions(damaged)
        except wheel_support.ElfError:
            pass
    with pytest.raises(wheel_support.ElfError):
        wheel_support.manylinux_tag([])
    with pytest.raises(ValueError, match="no licence is known"):
        wheel_support.license_expression(["libunknown.so.1"])


def test_the_conda_recipe_parses_and_carries_the_project_version():
    recipe = REPO / "packaging" / "conda"
    text = (recipe / "meta.yaml").read_text()
    version = re.search(r'{%\s*set version = "([^"]+)"\s*%}', text)
    assert version, "meta.yaml sets no version"
    project = re.search(r"project\(hipacm VERSION (\S+)", (REPO / "CMakeLists.txt").read_text())
    assert project and version.group(1) == project.group(1) == hipacm.__version__
    try:
        import yaml
    except ImportError:
        skip_or_fail("needs PyYAML (Debian: python3-yaml)")
    # conda-build renders the Jinja first; each expression stands in as a plain word here.
    rendered = re.sub(r"{%.*?%}", "", re.sub(r"{{\s*version\s*}}", version.group(1), text))
    rendered = re.sub(r"{{.*?}}", "jinja-expression", rendered)
    meta = yaml.safe_load(rendered)
    assert meta["package"] == {"name": "hipacm", "version": version.group(1)}
    assert meta["about"]["license"] == "MIT"
    assert (recipe / meta["source"]["path"] / meta["about"]["license_file"]).resolve() == \
        (REPO / "LICENSE").resolve()
    assert {"cmake >=3.20", "ninja"} <= set(meta["requirements"]["build"])
    assert "hipacm --version" in meta["test"]["commands"]
    build = recipe / "build.sh"
    assert os.access(build, os.X_OK)
    subprocess.run(["bash", "-n", str(build)], check=True)
    assert "cmake --install build" in build.read_text()
