# SPDX-License-Identifier: MIT
"""setuptools hook: a platform wheel when the plugin's binaries were copied in.

The metadata lives in pyproject.toml. A plain source tree builds the pure
package (py3-none-any). scripts/build-wheel.sh copies libhipacm.so.1, its
worker, the ``hipacm`` CLI and their non-system libraries into ``hipacm/``
first; the wheel is then a platlib wheel (``Root-Is-Purelib: false``) tagged
``manylinux_X_Y_<machine>``, X.Y being the highest GLIBC_ version any bundled
ELF file needs (wheel_support.py reads them), and installs the ``hipacm``
command. Either way METADATA is written as Metadata-Version 2.4 with a
License-Expression (the bundled libraries' licences too) and License-File
entries whose files land in ``.dist-info/licenses/``: setuptools older than
77 cannot write those fields itself.
"""

import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List

from setuptools import Distribution, setup

try:  # setuptools 70.1 and later carry bdist_wheel themselves
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / "hipacm"
sys.path.insert(0, str(HERE))
import wheel_support  # noqa: E402  (beside this file, not an installed module)

PLATFORM = (PACKAGE / "libhipacm.so.1").is_file()
# Written by build-wheel.sh beside setup.py: the project's licence and, in third-party/, the
# Debian copyright file of each bundled library with BUNDLED, the index that maps them.
LICENSE_FILES: List[str] = [name for name in ("LICENSE",) if (HERE / name).is_file()]
BUNDLED = HERE / "third-party" / "BUNDLED"
SONAMES: List[str] = []
if BUNDLED.is_file():
    for soname, _, _, license_file in wheel_support.bundled_index(BUNDLED):
        SONAMES.append(soname)
        if f"third-party/{license_file}" not in LICENSE_FILES:
            LICENSE_FILES.append(f"third-party/{license_file}")
    LICENSE_FILES.append("third-party/BUNDLED")
if PLATFORM:
    bundled_libs = sorted(p.name for p in (PACKAGE / ".libs").glob("*"))
    if sorted(SONAMES) != bundled_libs:
        raise SystemExit(f"third-party/BUNDLED lists {sorted(SONAMES)}, hipacm/.libs holds "
                         f"{bundled_libs}: each bundled library needs its licence")
LICENSE_EXPRESSION = wheel_support.license_expression(SONAMES)
# Fields this hook writes; whatever setuptools wrote for them is dropped first.
REWRITTEN = ("Metadata-Version:", "License:", "License-Expression:", "License-File:")


class PlatformDistribution(Distribution):  # type: ignore[misc]
    """Native code rides along: the wheel is not pure (``Root-Is-Purelib: false``) and the
    package goes to platlib, at the wheel's root rather than under .data/purelib."""

    def has_ext_modules(self) -> bool:
        return PLATFORM


class BdistWheel(bdist_wheel):  # type: ignore[misc,valid-type]
    def get_tag(self) -> Any:
        if not PLATFORM:
            return super().get_tag()
        # ctypes only, so any Python 3 runs it; the binaries fix the platform.
        elf_files = [PACKAGE / "libhipacm.so.1", PACKAGE / "hipacm-worker"]
        elf_files += [p for p in (PACKAGE / "hipacm",) if p.is_file()]
        elf_files += sorted((PACKAGE / ".libs").glob("*"))
        return "py3", "none", wheel_support.manylinux_tag(elf_files)

    def egg2dist(self, egginfo_path: str, distinfo_path: str) -> None:
        super().egg2dist(egginfo_path, distinfo_path)
        distinfo = Path(distinfo_path)
        metadata = distinfo / "METADATA"
        text = metadata.read_text(encoding="utf-8")
        head, sep, body = text.partition("\n\n")
        kept = []
        for line in head.splitlines():
            if line.startswith("License-File:"):
                # setuptools' own copy (top level before 77, licenses/ from 77).
                for old in (distinfo / line.split(":", 1)[1].strip(),
                            distinfo / "licenses" / line.split(":", 1)[1].strip()):
                    if old.is_file():
                        old.unlink()
            if not line.startswith(REWRITTEN):
                kept.append(line)
        head = "\n".join(["Metadata-Version: 2.4"] + kept +
                         [f"License-Expression: {LICENSE_EXPRESSION}"] +
                         [f"License-File: {name}" for name in LICENSE_FILES])
        metadata.write_text(head + "\n" + (sep + body if sep else ""), encoding="utf-8")
        for name in LICENSE_FILES:
            target = distinfo / "licenses" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HERE / name, target)


# pyproject.toml lists the scripts as dynamic, so setuptools wants them set here.
options: Dict[str, Any] = {"entry_points": {}, "cmdclass": {"bdist_wheel": BdistWheel},
                           "distclass": PlatformDistribution}
if PLATFORM and (PACKAGE / "hipacm").is_file():
    options["entry_points"] = {"console_scripts": ["hipacm = hipacm._cli:main"]}

setup(**options)
