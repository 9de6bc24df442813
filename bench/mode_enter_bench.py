#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mode_enter_bench.py - what entering a mode costs a fresh process with the cache off, with and
without the library facts remembered in the runtime directory.

Each measurement is a fresh interpreter that imports the Python binding, then times
AsyncCompileMode(2, arch=ARCH, isolation="process") entered and exited (no compile). "cold" empties
the runtime directory's facts first, so the host loads the compiler library to check the arch;
"remembered" runs with the facts an earlier process left. Rows alternate over the rounds.

  HIPACM_LIBRARY=build/release/libhipacm.so.1 /usr/bin/python3 bench/mode_enter_bench.py \\
      --arch gfx90a --arch sm_90 --rounds 7
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BINDING = Path(__file__).resolve().parent.parent / "bindings" / "python"

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import hipacm
mode = hipacm.AsyncCompileMode(2, arch=sys.argv[2], isolation="process")
start = time.perf_counter()
mode.__enter__()
mode.__exit__(None, None, None)
print(f"ENTER_MS {1e3 * (time.perf_counter() - start):.3f}")
"""


def enter_ms(arch, runtime_dir):
    env = dict(os.environ, HIPACM_CACHE="off", HIPACM_RUNTIME_DIR=str(runtime_dir))
    done = subprocess.run([sys.executable, "-c", CHILD, str(BINDING), arch], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("ENTER_MS "):
            return float(line.split()[1])
    raise RuntimeError(f"{arch}: no measurement (exit {done.returncode}): {done.stderr[-800:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if "HIPACM_LIBRARY" not in os.environ:
        sys.exit("mode_enter_bench.py: set HIPACM_LIBRARY to the libhipacm.so.1 to measure")
    print(f"{'arch':<10} {'row':<11} {'runs':>4} {'median_ms':>10} {'min_ms':>8}")
    with tempfile.TemporaryDirectory(prefix="hipacm-enter-bench-") as scratch:
        runtime_dir = Path(scratch) / "run"
        for arch in args.arch:
            times = {"cold": [], "remembered": []}
            for round_index in range(args.rounds):
                order = ["cold", "remembered"] if round_index % 2 == 0 else ["remembered", "cold"]
                for row in order:
                    if row == "cold":
                        shutil.rmtree(runtime_dir / "facts", ignore_errors=True)
                    else:
                        enter_ms(arch, runtime_dir)  # untimed: leaves the facts behind
                    times[row].append(enter_ms(arch, runtime_dir))
            for row, values in times.items():
                print(f"{arch:<10} {row:<11} {len(values):>4} {statistics.median(values):>10.2f} "
                      f"{min(values):>8.2f}")
            ratio = statistics.median(times["cold"]) / statistics.median(times["remembered"])
            print(f"{arch:<10} cold / remembered = {ratio:.1f}x")


if __name__ == "__main__":
    main()
