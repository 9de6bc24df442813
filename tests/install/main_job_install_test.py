#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# `cmake --install` works from a build that built only what the README's first line builds
# (scripts/warmup-examples.sh's --target list): every build-tree file the install copies is made by
# those targets (ninja's graph of them), and an install into a DESTDIR holds the licence, docs,
# library, headers, tool, worker, pkg-config and CMake files, completions, and (when built) the man
# pages and hipacm-mpi in LIBEXECDIR/hipacm.
#   main_job_install_test.py BUILD_DIR SOURCE_DIR
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

build = Path(sys.argv[1]).resolve()
source = Path(sys.argv[2]).resolve()


def fail(message):
    print(f"main_job_install_test: {message}", file=sys.stderr)
    sys.exit(1)


def cache_value(name):
    match = re.search(rf"^{name}:[A-Z]+=(.*)$", (build / "CMakeCache.txt").read_text(), re.M)
    return match.group(1) if match else ""


# The targets the README's first line builds, read from the script itself so they cannot drift.
script = (source / "scripts/warmup-examples.sh").read_text()
match = re.search(r"^cmake --build build/release .*--target (.+)$", script, re.M)
if not match:
    fail("no 'cmake --build build/release ... --target' line in scripts/warmup-examples.sh")
targets = shlex.split(match.group(1))

# The README's two lines share build/release: the same options, or each would rebuild everything.
configure = re.search(r"^cmake -S \. -B build/release -G Ninja (.*?)( >/dev/null)?$", script, re.M)
release = re.search(r"^CTEST_ARGS=\"\" run_config release (.*)$",
                    (source / "scripts/test.sh").read_text(), re.M)
if not configure or not release:
    fail("cannot find build/release's configure line in scripts/warmup-examples.sh or test.sh")
if sorted(shlex.split(configure.group(1))) != sorted(shlex.split(release.group(1))):
    fail(f"scripts/warmup-examples.sh configures build/release with '{configure.group(1)}', "
         f"scripts/test.sh with '{release.group(1)}'")

ninja = ["ninja", "-C", str(build)]
graph = subprocess.run(ninja + ["-t", "graph"] + targets, capture_output=True, text=True,
                       check=True).stdout
closure = {(build / label).resolve() if not os.path.isabs(label) else Path(label)
           for label in re.findall(r'\[label="([^"]+)"', graph)}
# Every output of every build edge, explicit or implicit (libhipacm.so.1 is an implicit output of
# the edge that makes libhipacm.so), mapped to the edge's outputs; ninja's graph names explicit
# outputs only.
edge_of = {}
for line in (build / "build.ninja").read_text().splitlines():
    if not line.startswith("build "):
        continue
    names = [n for n in line[len("build "):].split(":", 1)[0].split() if n != "|"]
    paths = frozenset(Path(n) if os.path.isabs(n) else (build / n).resolve() for n in names)
    for path in paths:
        edge_of[path] = paths
outputs = set(edge_of)
closure |= {path for path in outputs if edge_of[path] & closure}

# Every file(INSTALL ...) source in the build tree that some rule builds must be built by the
# main job's targets (OPTIONAL ones may be missing).
copied = []
for install_script in build.rglob("cmake_install.cmake"):
    for statement in re.findall(r"file\(INSTALL\b.*?\)\n", install_script.read_text(), re.S):
        if "OPTIONAL" in statement:
            continue
        copied += [Path(p) for p in re.findall(r'"(/[^"$]+)"', statement)
                   if Path(p).is_relative_to(build)]
if not copied:
    fail("found no file(INSTALL) of the build tree in its cmake_install.cmake files")
left_out = sorted(str(p) for p in copied if p.resolve() in outputs and p.resolve() not in closure)
if left_out:
    fail(f"cmake --install copies files that '--target {' '.join(targets)}' does not build: "
         + ", ".join(left_out))

# The install itself, into a DESTDIR, at the prefix the build was configured with.
with tempfile.TemporaryDirectory() as destdir:
    env = dict(os.environ, DESTDIR=destdir)
    done = subprocess.run(["cmake", "--install", str(build)], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        fail(f"cmake --install failed:\n{done.stdout}{done.stderr}")
    root = Path(destdir + cache_value("CMAKE_INSTALL_PREFIX"))

    def installed_dir(var, default):
        value = cache_value(var) or default
        return Path(destdir + value) if os.path.isabs(value) else root / value

    lib = installed_dir("CMAKE_INSTALL_LIBDIR", "lib")
    libexec = installed_dir("CMAKE_INSTALL_LIBEXECDIR", "libexec")
    data = installed_dir("CMAKE_INSTALL_DATADIR", "share")
    expected = [
        root / "share/doc/hipacm/LICENSE", root / "share/doc/hipacm/README.md",
        root / "share/doc/hipacm/docs/INSTALL.md",
        root / "share/doc/hipacm/docs/schemas/hipacm-warmup-report-2.schema.json",
        lib / "libhipacm.so.1", lib / "libhipacm.so", lib / "libhipacm_intercept.so",
        root / "include/hipacm/hipacm.h", root / "include/hipacm/hipacm.hpp",
        root / "bin/hipacm", libexec / "hipacm/hipacm-worker",
        lib / "pkgconfig/hipacm.pc", lib / "cmake/hipacm/hipacmConfig.cmake",
        lib / "cmake/hipacm/hipacmConfigVersion.cmake", lib / "cmake/hipacm/hipacmTargets.cmake",
        data / "bash-completion/completions/hipacm", data / "fish/vendor_completions.d/hipacm.fish",
    ]
    if cache_value("HIPACM_HELP2MAN").endswith("help2man") and cache_value("HIPACM_BUILD_MANPAGES") != "OFF":
        expected += [data / "man/man1/hipacm.1", data / "man/man1/hipacm-warmup.1"]
    if (build / "hipacm-mpi").exists():
        expected.append(libexec / "hipacm/hipacm-mpi")
        if (root / "bin/hipacm-mpi").exists():
            fail("hipacm-mpi is installed in bin/: it is a helper, for LIBEXECDIR/hipacm/")
    missing = [str(p.relative_to(destdir)) for p in expected if not p.exists()]
    if missing:
        fail("not installed: " + ", ".join(missing))
    zsh = list(root.rglob("_hipacm"))
    if len(zsh) != 1:
        fail(f"expected one zsh completion _hipacm, found {zsh}")
print(f"main_job_install_test: ok ({len(copied)} build-tree files copied, all built by "
      f"--target {' '.join(targets)})")
