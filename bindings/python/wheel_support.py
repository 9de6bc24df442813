# SPDX-License-Identifier: MIT
"""What setup.py needs to describe a platform wheel: its manylinux tag and its licences.

Not part of the installed package. The tag is read from the bundled ELF files themselves (the
highest GLIBC_ version any of them needs), so it follows whatever machine built them.
"""

import re
import struct
from pathlib import Path
from typing import Dict, Iterable, List, Set, Tuple

SHT_GNU_VERNEED = 0x6FFFFFFE
MACHINES = {62: "x86_64", 183: "aarch64"}
# Bounds for a file this build made itself; anything past them is not one of ours.
MAX_SECTIONS = 4096
MAX_ENTRIES = 4096

# The SPDX expression of each library a wheel may bundle, by the start of its soname.
BUNDLED_LICENSES = {
    "libboost_": "BSL-1.0",
    "libfmt.so.": "MIT",
    "libhiredis.so.": "BSD-3-Clause",
    "libnettle.so.": "LGPL-3.0-or-later OR GPL-2.0-or-later",
    "libsqlite3.so.": "blessing",
}
PROJECT_LICENSE = "MIT"


class ElfError(ValueError):
    pass


def _cstring(data: bytes, offset: int) -> str:
    if not 0 <= offset < len(data):
        raise ElfError("string offset outside its table")
    end = data.find(b"\0", offset)
    if end < 0:
        raise ElfError("unterminated string")
    return data[offset:end].decode("ascii", "replace")


def needed_versions(path: Path) -> Tuple[str, Dict[str, Set[str]]]:
    """(machine, {needed file: version names}) from the ELF's .gnu.version_r."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        raise ElfError(f"{path}: not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise ElfError(f"{path}: not a little-endian ELF64 file")
    machine = struct.unpack_from("<H", data, 18)[0]
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    if shnum > MAX_SECTIONS or shentsize < 64 or shoff + shnum * shentsize > len(data):
        raise ElfError(f"{path}: section headers out of bounds")
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]

    def section_bytes(index: int) -> bytes:
        if not 0 <= index < shnum:
            raise ElfError(f"{path}: section index out of range")
        offset, size = sections[index][4], sections[index][5]
        if offset + size > len(data):
            raise ElfError(f"{path}: section out of bounds")
        return data[offset:offset + size]

    found: Dict[str, Set[str]] = {}
    for index, header in enumerate(sections):
        if header[1] != SHT_GNU_VERNEED:
            continue
        table = section_bytes(index)
        strings = section_bytes(header[6])
        offset = 0
        for _ in range(MAX_ENTRIES):
            if offset + 16 > len(table):
                raise ElfError(f"{path}: verneed entry out of bounds")
            _, count, file_name, aux, following = struct.unpack_from("<HHIII", table, offset)
            names = found.setdefault(_cstring(strings, file_name), set())
            entry = offset + aux
            for _ in range(min(count, MAX_ENTRIES)):
                if entry + 16 > len(table):
                    raise ElfError(f"{path}: vernaux entry out of bounds")
                _, _, _, name, next_aux = struct.unpack_from("<IHHII", table, entry)
                names.add(_cstring(strings, name))
                if next_aux == 0:
                    break
                entry += next_aux
            if following == 0:
                break
            offset += following
        else:
            raise ElfError(f"{path}: too many verneed entries")
    return MACHINES.get(machine, f"machine{machine}"), found


def highest(versions: Iterable[str], prefix: str) -> Tuple[int, ...]:
    """The highest PREFIX<dotted numbers> among versions; () if none."""
    best: Tuple[int, ...] = ()
    for version in versions:
        match = re.fullmatch(re.escape(prefix) + r"(\d+(?:\.\d+)*)", version)
        if match:
            best = max(best, tuple(int(n) for n in match.group(1).split(".")))
    return best


def floors(paths: Iterable[Path]) -> Dict[str, object]:
    """The machine and the highest GLIBC_, GLIBCXX_ and CXXABI_ versions the files need."""
    machines: Set[str] = set()
    versions: Set[str] = set()
    for path in paths:
        machine, needed = needed_versions(path)
        machines.add(machine)
        for names in needed.values():
            versions |= names
    if len(machines) != 1:
        raise ElfError(f"the bundled files are for {sorted(machines) or 'no'} machines, not one")
    return {"machine": machines.pop(), "GLIBC": highest(versions, "GLIBC_"),
            "GLIBCXX": highest(versions, "GLIBCXX_"), "CXXABI": highest(versions, "CXXABI_")}


def manylinux_tag(paths: Iterable[Path]) -> str:
    """PEP 600's tag for the files: manylinux_<glibc major>_<minor>_<machine>."""
    found = floors(paths)
    glibc = found["GLIBC"]
    assert isinstance(glibc, tuple)
    if len(glibc) < 2:
        raise ElfError("no GLIBC_ version is needed by the bundled files: not a glibc build")
    return f"manylinux_{glibc[0]}_{glibc[1]}_{found['machine']}"


def bundled_index(path: Path) -> List[List[str]]:
    """The rows of third-party/BUNDLED: soname, Debian package, version, licence file."""
    rows = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            fields = line.split("\t")
            if len(fields) != 4:
                raise ValueError(f"{path}: malformed line {line!r}")
            rows.append(fields)
    return rows


def license_expression(sonames: Iterable[str]) -> str:
    """The project's licence AND each bundled library's, each term once."""
    terms = [PROJECT_LICENSE]
    for soname in sorted(sonames):
        matches = [spdx for prefix, spdx in BUNDLED_LICENSES.items() if soname.startswith(prefix)]
        if not matches:
            raise ValueError(f"no licence is known for the bundled {soname}: add it to "
                             "BUNDLED_LICENSES in wheel_support.py")
        term = f"({matches[0]})" if " OR " in matches[0] else matches[0]
        if term not in terms:
            terms.append(term)
    return " AND ".join(terms)
