# SPDX-License-Identifier: MIT
# test_lsan_tracer.py - scripts/lsan-tracer-crashes.py on real ctest runs of a made-up project:
# it names a test only when LeakSanitizer's tracer crash is all that failed it.
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "lsan-tracer-crashes.py"
TRACER_CRASH = ("Tracer caught signal 11: addr=0xc58 pc=0x7f86454e80f0 sp=0x7f863121cd10\n"
                "==4506==LeakSanitizer has encountered a fatal error.\n")
PASSED = "[  PASSED  ] 1 test.\n"

pytestmark = pytest.mark.skipif(shutil.which("ctest") is None, reason="ctest is not installed")


def project(root, tests):
    """A ctest project whose tests ({name: (printed text, exit status)}) print and exit so."""
    lines = []
    for index, (name, (text, status)) in enumerate(tests.items()):
        out = root / f"out{index}.txt"
        out.write_text(text)
        lines.append(f'add_test([=[{name}]=] sh -c [=[cat "{out}"; exit {status}]=])\n')
    (root / "CTestTestfile.cmake").write_text("".join(lines))


def failed_only_by_tracer(root, tests):
    project(root, tests)
    subprocess.run(["ctest", "--test-dir", str(root)], capture_output=True, timeout=120,
                   check=False)
    completed = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True,
                               text=True, timeout=60, check=True)
    return completed.stdout.strip()


def selected(root, regex):
    """The tests that `ctest -R regex` would run."""
    listing = subprocess.run(["ctest", "--test-dir", str(root), "-N", "-R", regex],
                             capture_output=True, text=True, timeout=60, check=True).stdout
    return sorted(line.split(": ", 1)[1] for line in listing.splitlines() if "Test #" in line)


def test_a_passed_test_whose_tracer_crashed_is_named_and_only_it_matches(tmp_path):
    name = "Table/Objects.Header/gfx9_4_generic  # GetParam() = gfx9-4-generic"
    regex = failed_only_by_tracer(tmp_path, {
        name: (PASSED + TRACER_CRASH, 1),
        "Table/Objects.Header/gfx9": (PASSED, 0),
        "Table/ObjectsXHeader/gfx9_4_generic": (PASSED, 0),
    })
    assert regex
    assert selected(tmp_path, regex) == [name]


def test_every_tracer_only_failure_is_named(tmp_path):
    regex = failed_only_by_tracer(tmp_path, {
        "A.one": (PASSED + TRACER_CRASH, 1),
        "B.two": (PASSED + TRACER_CRASH, 1),
        "C.three": (PASSED, 0),
    })
    assert selected(tmp_path, regex) == ["A.one", "B.two"]


@pytest.mark.parametrize("output", [
    "[  FAILED  ] A.one\n" + TRACER_CRASH,
    PASSED + "==1==ERROR: LeakSanitizer: detected memory leaks\n" + TRACER_CRASH,
    PASSED + "==1==ERROR: AddressSanitizer: heap-use-after-free\n" + TRACER_CRASH,
    PASSED + "a.cpp:3:5: runtime error: signed integer overflow\n" + TRACER_CRASH,
    "8 passed in 2.00s\n" + TRACER_CRASH,
    PASSED + "Segmentation fault\n",
])
def test_a_real_failure_is_never_named(tmp_path, output):
    assert failed_only_by_tracer(tmp_path, {"A.one": (output, 1)}) == ""


def test_a_tracer_crash_beside_a_real_failure_names_nothing(tmp_path):
    assert failed_only_by_tracer(tmp_path, {
        "A.one": (PASSED + TRACER_CRASH, 1),
        "B.two": ("[  FAILED  ] B.two\n", 1),
    }) == ""


def test_a_run_that_passed_names_nothing(tmp_path):
    assert failed_only_by_tracer(tmp_path, {"A.one": (PASSED, 0)}) == ""
