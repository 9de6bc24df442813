#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads a ctest run's own records: which tests failed, and what each one printed.

Usage: ctest_log.py BUILD_DIR [LINES]
Prints, for each test of the last ctest run in BUILD_DIR that failed, the last LINES (default 40)
lines of its output, from BUILD_DIR/Testing/Temporary/LastTest.log. Scripts that run ctest where
its console output scrolls out of view (the ROCm matrix's roots) print this once more at the end.
Also imported by lsan-tracer-crashes.py for the same records.
"""
import re
import sys

MAX_LOG_BYTES = 512 * 1024 * 1024


def read_text(path):
    try:
        with open(path, "rb") as log:
            return log.read(MAX_LOG_BYTES).decode("utf-8", "replace")
    except OSError as error:
        print(f"cannot read {path}: {error.strerror}", file=sys.stderr)
        return ""


def failed_records(log_text):
    """(name, output) of every test that failed, in the order ctest logged them."""
    records = []
    # Each test's record starts at "N/M Testing: NAME" and ends with its verdict line.
    for record in re.split(r"^(?=\d+/\d+ Testing: )", log_text, flags=re.M):
        header = re.match(r"\d+/\d+ Testing: (.+)", record)
        if not header or "\nTest Failed." not in record:
            continue
        output = record.split("<end of output>", 1)[0]
        output = output.split("\nOutput:\n", 1)[-1]
        output = re.sub(r"^-{20,}\n", "", output, count=1)
        records.append((header.group(1).strip(), output))
    return records


def failed_names(build_dir):
    """The names LastTestsFailed.log lists ("NUMBER:NAME" a line)."""
    text = read_text(build_dir + "/Testing/Temporary/LastTestsFailed.log")
    return {line.split(":", 1)[1] for line in text.splitlines() if ":" in line}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: ctest_log.py BUILD_DIR [LINES]")
    lines = int(sys.argv[2]) if len(sys.argv) == 3 else 40
    for name, output in failed_records(read_text(sys.argv[1] + "/Testing/Temporary/LastTest.log")):
        tail = output.rstrip("\n").splitlines()[-lines:]
        print(f"--- {name}: the last {len(tail)} lines of its output ---")
        print("\n".join(tail))


if __name__ == "__main__":
    main()
