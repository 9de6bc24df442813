#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# debian/ agrees with what `cmake --install` produces, without a package build
# (scripts/build-debs.sh does that): debian/control's binary packages are those with a .install
# file; the build's install into a DESTDIR, moved to the layout debian/rules asks for, puts every
# file in exactly one package and leaves no .install line matching nothing; the changelog parses
# and debian/source/format is one dpkg-source knows.
#   debian_layout_test.py BUILD_DIR SOURCE_DIR
import fnmatch
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

build = Path(sys.argv[1]).resolve()
debian = Path(sys.argv[2]).resolve() / "debian"
problems = []


def cache_value(name, default=""):
    match = re.search(rf"^{name}:[A-Z]+=(.*)$", (build / "CMakeCache.txt").read_text(), re.M)
    return match.group(1) if match else default


control = (debian / "control").read_text()
paragraphs = [p for p in re.split(r"\n\s*\n", control.strip()) if p]
if not paragraphs[0].startswith("Source: hipacm"):
    problems.append("debian/control does not start with 'Source: hipacm'")
packages = {re.search(r"^Package: (\S+)$", p, re.M).group(1) for p in paragraphs[1:]}
install_files = {p.name[:-len(".install")]: p for p in debian.glob("*.install")}
if packages != set(install_files):
    problems.append(f"debian/control's packages {sorted(packages)} are not those with a .install "
                    f"file {sorted(install_files)}")
if "Build-Depends:" not in paragraphs[0] or "debhelper-compat (= 13)" not in paragraphs[0]:
    problems.append("debian/control's Build-Depends lack debhelper-compat (= 13)")

# What debian/rules asks cmake for, and where this build put the same files.
rules = (debian / "rules").read_text()
triplet = "x86_64-linux-gnu"
moves = {cache_value("CMAKE_INSTALL_LIBDIR", "lib"): f"lib/{triplet}"}
if f"-DCMAKE_INSTALL_LIBEXECDIR=lib/$(DEB_HOST_MULTIARCH)" not in rules:
    problems.append("debian/rules does not put LIBEXECDIR in the multiarch library directory")
moves[cache_value("CMAKE_INSTALL_LIBEXECDIR", "libexec")] = f"lib/{triplet}"
zsh = re.search(r"-DHIPACM_ZSH_COMPLETION_DIR=(\S+)", rules)
moves[cache_value("HIPACM_ZSH_COMPLETION_DIR")] = zsh.group(1) if zsh else ""


def debian_path(relative):
    for here, there in sorted(moves.items(), key=lambda item: -len(item[0])):
        if here and there and (relative == here or relative.startswith(here + "/")):
            return "usr/" + there + relative[len(here):]
    return "usr/" + relative


with tempfile.TemporaryDirectory() as destdir:
    subprocess.run(["cmake", "--install", str(build)], env=dict(os.environ, DESTDIR=destdir),
                   check=True, capture_output=True)
    root = Path(destdir + cache_value("CMAKE_INSTALL_PREFIX"))
    files = [debian_path(str(p.relative_to(root))) for p in sorted(root.rglob("*"))
             if p.is_file() or p.is_symlink()]

# debian/rules deletes the licence from the docs (debian/copyright carries it).
removed = {line.split()[-1].replace("debian/tmp/", "")
           for line in rules.splitlines() if line.strip().startswith("rm ")}
claimed = {path: [] for path in files if path not in removed}
mpi_built = (build / "hipacm-mpi").exists()
for package, install_file in install_files.items():
    for line in install_file.read_text().split("\n"):
        pattern = line.strip()
        if not pattern:
            continue
        hits = [path for path in claimed
                if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern + "/*")]
        if not hits and not (package == "hipacm-mpi" and not mpi_built):
            problems.append(f"debian/{install_file.name}: '{pattern}' matches no installed file")
        for path in hits:
            claimed[path].append(package)
for path, owners in claimed.items():
    if len(owners) != 1:
        problems.append(f"{path} is in {len(owners)} packages {owners}: exactly one expected")

# dpkg's own tools read the changelog and the source format.
version = subprocess.run(["dpkg-parsechangelog", "-l", str(debian / "changelog"), "-S", "Version"],
                         capture_output=True, text=True, check=True).stdout.strip()
if not re.fullmatch(r"\d+\.\d+\.\d+-\d+", version):
    problems.append(f"debian/changelog's version is '{version}'")
project = re.search(r"project\(hipacm VERSION (\S+)", (debian.parent / "CMakeLists.txt").read_text())
if project and not version.startswith(project.group(1) + "-"):
    problems.append(f"debian/changelog's {version} is not the project's version {project.group(1)}")
source_format = (debian / "source/format").read_text().strip()
if source_format not in ("3.0 (quilt)", "3.0 (native)"):
    problems.append(f"debian/source/format is '{source_format}'")

if problems:
    print("debian_layout_test:\n  " + "\n  ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"debian_layout_test: ok ({len(claimed)} installed files, each in one of "
      f"{len(packages)} packages)")
