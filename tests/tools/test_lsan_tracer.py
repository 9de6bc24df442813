# SPDX-License-Identifier: MIT
# test_lsan_tracer.py - scripts/lsan-tracer-crashes.py on real ctest runs of a made-up project:
# it names a test only when LeakSanitizer's tracer crash is all that failed it; and
# scripts/ctest_log.py, whose records it reads, prints what each failed test printed.
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "lsan-tracer-crashes.py"
CTEST_LOG = REPO / "scripts" / "ctest_log.py"
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


def failed_output(root, tests, *lines):
    project(root, tests)
    subprocess.run(["ctest", "--test-dir", str(root)], capture_output=True, timeout=120,
                   check=False)
    return subprocess.run([sys.executable, str(CTEST_LOG), str(root), *lines],
                          capture_output=True, text=True, timeout=60, check=True).stdout


def test_the_output_of_each_failed_test_and_no_other_is_printed(tmp_path):
    printed = failed_output(tmp_path, {
        "A.one": ("first line of A\nexported symbols: missing export: hipacm_x\n", 1),
        "B.two": ("B passed quietly\n", 0),
        "C.three": ("C failed\n", 2),
    })
    assert printed == ("--- A.one: the last 2 lines of its output ---\n"
                       "first line of A\nexported symbols: missing export: hipacm_x\n"
                       "--- C.three: the last 1 lines of its output ---\nC failed\n")


def test_only_the_last_lines_of_a_long_output_are_printed(tmp_path):
    text = "".join(f"line {i}\n" for i in range(100))
    printed = failed_output(tmp_path, {"A.one": (text, 1)}, "3").splitlines()
    assert printed == ["--- A.one: the last 3 lines of its output ---", "line 97", "line 98",
                       "line 99"]


def test_a_run_that_passed_prints_nothing(tmp_path):
    assert failed_output(tmp_path, {"A.one": ("fine\n", 0)}) == ""
