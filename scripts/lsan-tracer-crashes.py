#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Names the tests of a ctest run that failed only because LeakSanitizer's own tracer crashed.

LeakSanitizer stops the world at exit with a tracer thread; now and then that tracer segfaults
("Tracer caught signal 11") after every assertion has passed, and the run fails with no leak and
no failed test (google/sanitizers#1353, open upstream). scripts/test.sh reruns the tests named here
once, and only those: a test with a failed assertion, a leak report or any other sanitizer report
is never named, so a real failure still fails the run.

Usage: lsan-tracer-crashes.py BUILD_DIR
Reads BUILD_DIR/Testing/Temporary/LastTest.log and LastTestsFailed.log. When every failed test
failed only so, prints one CMake regular expression that matches exactly those tests; otherwise
prints nothing (a real failure is never retried, nor the tracer crashes beside it).
"""
import re
import sys

from ctest_log import failed_names, failed_records, read_text

TRACER_CRASH = ("Tracer caught signal", "LeakSanitizer has encountered a fatal error")
# Any of these means the test found something real: it is never rerun.
REAL_FAILURE = (
    "[  FAILED  ]",
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer: detected memory leaks",
    "runtime error:",
    "WARNING: ThreadSanitizer",
)
GTEST_PASSED = "[  PASSED  ]"


def tracer_only_failures(log_text):
    names = []
    for name, output in failed_records(log_text):
        if not all(sign in output for sign in TRACER_CRASH):
            continue
        if GTEST_PASSED not in output or any(sign in output for sign in REAL_FAILURE):
            continue
        names.append(name)
    return names


def cmake_regex_for(names):
    escaped = [re.sub(r"([][.*+?^$|()\\{}])", r"\\\1", name) for name in names]
    return "^(" + "|".join(escaped) + ")$"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lsan-tracer-crashes.py BUILD_DIR")
    failed = failed_names(sys.argv[1])
    names = tracer_only_failures(read_text(sys.argv[1] + "/Testing/Temporary/LastTest.log"))
    if not failed or set(names) != failed:
        return
    for name in names:
        print(f"LeakSanitizer's tracer crashed after '{name}' passed", file=sys.stderr)
    print(cmake_regex_for(names))


if __name__ == "__main__":
    main()
