#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""run_bench.py - an unchanged hipRTC program, plain and under `hipacm run`: cold, from the cache,
with two threads; every ratio against plain runs of the same bench.

The program is the ordinary linked hipRTC client of the intercept tests
(tests/intercept/clients/linked_client.cpp: no hipacm code), compiling the MIOpen-style fixtures
(tests/fixtures/miopen_style) and the templated kernel with name expressions, for gfx90a. Every
measurement is a whole fresh process, timed from outside, start-up and hipRTC's own loading
included. The rows, alternated round by round:

  a     plain hipRTC, one thread: the baseline
  b     `hipacm run`, one thread, empty cache (a fresh HIPACM_CACHE_DIR), the compile service
        running (started by an earlier row) and the runtime-header PCHs built
  b-svc the same, with no compile service running: the process starts it (an untimed two-thread
        run follows, so that the service then has two warm workers, as after any earlier
        two-thread program)
  c     `hipacm run`, a fresh process, the cache filled by that round's b
  b1    b with one job of the 15: what a process pays around its compiles (start-up, loading
        libhipacm, ordering a worker), which more threads do not divide
  d     `hipacm run`, two threads, empty cache, the service running
  e     plain hipRTC, two threads (hipRTC 5.2.3 is not safe when compiles overlap: a run that
        crashes, hangs or prints another dump than plain is counted as such, never timed)
  f     two plain one-thread processes started together, each compiling every job: what two
        cores give plain hipRTC on this machine. Its wall is for twice a's work, so its speed-up
        is 2 x a / f, the most any 2-way split of a's work reaches here

Every dump is compared with plain one-thread's; `hipacm run --stats` counts hits and compiles.
The service, the machine budget's slots and the PCHs live in a private runtime directory
(HIPACM_RUNTIME_DIR), so that the bench starts from nothing: its first process (row "first",
measured once) starts the service and builds the PCHs, as on a machine where hipacm never ran.
Settings that the test suite sets (HIPACM_CACHE, HIPACM_ISOLATION, ...) are removed: every
`hipacm run` row gets hipacm's defaults.

  /usr/bin/python3 bench/run_bench.py [--build build/release] [--rounds 5] [--quiet-wait 600]
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = [ROOT / "tests" / "fixtures" / "miopen_style" / "manifest.json",
             ROOT / "tests" / "intercept" / "clients" / "kernels" / "manifest.json"]
# The fixtures and the templated kernel; not the kernel that fails to compile, which hipacm
# compiles again in every process (a failure is not cached) and would time a compile in row c.
ONLY = ["--only", "miopen_style/", "--only", "templated"]
ONE_JOB = ["--only", "-DMS_OP_ID=0 -DUSE_FWD=1 "]
COMGR_RANDOM = re.compile(r"/comgr-[0-9a-f]{6}/")
STATS = re.compile(r"hipacm run: (\d+) compiles?: (\d+) cache hits?, (\d+) compiled, (\d+) failed, "
                   r"(\d+) passed through")
# Variables of the caller (the test suite's, a shell under `hipacm run`) that would change what a
# user gets by default.
DROPPED = ("HIPACM_CACHE", "HIPACM_CACHE_DIR", "HIPACM_ISOLATION", "HIPACM_COMPILE_SERVICE",
           "HIPACM_WORKER", "HIPACM_RUN_STATS", "HIPACM_MACHINE_JOBS", "HIPACM_HIPRTC_PCH",
           "HIPACM_IDLE_MS", "HIPACM_SERVICE_IDLE_MS", "HIPACM_LOG", "LD_PRELOAD")

ROWS = {
    "a": "plain hipRTC, 1 thread",
    "b": "hipacm run, cold cache, service running",
    "b-svc": "hipacm run, cold cache, process starts the service",
    "c": "hipacm run, fresh process, cache filled",
    "b1": "b with one job (tensor_ops.hip -DMS_OP_ID=0 -DUSE_FWD=1)",
    "d": "hipacm run, 2 threads, cold cache, service running",
    "e": "plain hipRTC, 2 threads",
    "f": "2 plain 1-thread processes at once, each all jobs (2x a's work)",
}


class Bench:
    def __init__(self, args, scratch):
        build = Path(args.build).resolve()
        self.cli = build / "hipacm"
        self.client = build / "tests" / "intercept" / "hipacm_intercept_linked_client"
        for path in (self.cli, self.client, build / "libhipacm_intercept.so"):
            if not path.exists():
                sys.exit(f"run_bench.py: {path} is missing: build hipacm, hipacm_intercept and "
                         "hipacm_intercept_linked_client")
        self.scratch = scratch
        self.runtime_dir = scratch / "run"
        self.runtime_dir.mkdir(mode=0o700)
        self.caches = 0
        self.env = {k: v for k, v in os.environ.items() if k not in DROPPED}
        self.env["HIPACM_RUNTIME_DIR"] = str(self.runtime_dir)
        self.reference = None

    def fresh_cache(self):
        self.caches += 1
        return self.scratch / f"cache{self.caches}"

    def run(self, threads, hipacm, cache_dir, only=ONLY):
        """One fresh process: (seconds, dump, stats, failure text or None)."""
        argv = [str(self.client), "--threads", str(threads), *only, *map(str, MANIFESTS)]
        if hipacm:
            argv = [str(self.cli), "run", "--stats", "--", *argv]
        env = dict(self.env, HIPACM_CACHE_DIR=str(cache_dir))
        start = time.monotonic()
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                                  check=False)
        except subprocess.TimeoutExpired:
            return time.monotonic() - start, "", None, "hung (killed after 300 s)"
        seconds = time.monotonic() - start
        dump = COMGR_RANDOM.sub("/comgr-XXXXXX/", done.stdout)
        found = STATS.findall(done.stderr)
        stats = tuple(int(n) for n in found[-1]) if found else None
        failure = None
        if done.returncode < 0:
            failure = f"crashed ({signal.Signals(-done.returncode).name})"
        elif done.returncode != 0:
            failure = f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
        elif self.reference is not None and only is ONLY and dump != self.reference:
            failure = "dump differs from plain"
        return seconds, dump, stats, failure

    def run_pair(self):
        """Row f: two plain processes at once; (wall seconds, failure text or None)."""
        argv = [str(self.client), "--threads", "1", *ONLY, *map(str, MANIFESTS)]
        start = time.monotonic()
        children = [subprocess.Popen(argv, env=dict(self.env, HIPACM_CACHE_DIR=str(cache)),
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                    for cache in (self.fresh_cache(), self.fresh_cache())]
        outputs = [child.communicate(timeout=300)[0] for child in children]
        seconds = time.monotonic() - start
        for child, output in zip(children, outputs):
            if child.returncode != 0:
                return seconds, f"exit {child.returncode}"
            if COMGR_RANDOM.sub("/comgr-XXXXXX/", output) != self.reference:
                return seconds, "dump differs from plain"
        return seconds, None

    def service_pids(self):
        """The compile services this bench started: `hipacm-worker --service SOCKET` with the
        socket in the bench's own runtime directory."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--service" in words and any(w.startswith(bytes(self.runtime_dir)) for w in words):
                pids.append(int(entry.name))
        return pids

    def stop_service(self):
        pids = self.service_pids()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while self.service_pids() and time.monotonic() < deadline:
            time.sleep(0.05)

    def pch_counts(self):
        store = self.runtime_dir / "pch"
        ready = len(list(store.glob("*/hiprtc_runtime.h.pch"))) if store.is_dir() else 0
        refused = len(list(store.glob("*.refused"))) if store.is_dir() else 0
        return ready, refused


def machine_load():
    try:
        builds = subprocess.run(["pgrep", "-c", "cc1plus"], capture_output=True, text=True,
                                check=False).stdout.strip() or "0"
    except OSError:
        builds = "?"
    return f"load {os.getloadavg()[0]:.2f}, {builds} compiler processes of builds"


def wait_quiet(limit_s):
    """Waits (up to limit_s) until no build's compiler (cc1plus) runs: the machine has 2 cores."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        count = subprocess.run(["pgrep", "-c", "cc1plus"], capture_output=True, text=True,
                               check=False).stdout.strip()
        if count in ("", "0"):
            return
        time.sleep(5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build" / "release"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quiet-wait", type=float, default=0,
                        help="seconds to wait, before each round, for builds to finish")
    args = parser.parse_args()

    times = {row: [] for row in ROWS}
    round_times = {}  # round -> row -> seconds, for ratios taken within a round
    failures = {row: [] for row in ROWS}
    stats_seen = {row: set() for row in ROWS}
    scratch = Path(tempfile.mkdtemp(prefix="hipacm-run-bench-"))
    bench = Bench(args, scratch)
    try:
        # The reference dump, and the first `hipacm run` on a machine where hipacm never ran.
        _, bench.reference, _, failure = bench.run(1, False, bench.fresh_cache())
        if failure:
            sys.exit(f"run_bench.py: the plain client failed: {failure}")
        jobs = bench.reference.count("\njob ")
        first_s, _, first_stats, failure = bench.run(1, True, bench.fresh_cache())
        if failure:
            sys.exit(f"run_bench.py: the first hipacm run failed: {failure}")
        # The first run's workers build the PCHs beside their compiles; cold runs until the
        # store stops growing, so that the timed rows find it as a second run on the machine does.
        for _ in range(6):
            before = bench.pch_counts()
            time.sleep(2)
            bench.run(1, True, bench.fresh_cache())
            time.sleep(2)
            if bench.pch_counts() == before:
                break
        ready, refused = bench.pch_counts()
        print(f"{jobs} jobs; first hipacm run on the machine (starts the service, builds the PCHs): "
              f"{first_s:.3f} s, stats {first_stats}; PCH store: {ready} ready, {refused} refused")

        for round_index in range(args.rounds):
            if args.quiet_wait:
                wait_quiet(args.quiet_wait)
            print(f"round {round_index + 1}: {machine_load()}", flush=True)
            order = ["a", "b-svc", "c", "b", "b1", "d", "e", "f"]
            if round_index % 2:
                order = ["f", "e", "d", "b1", "b", "c", "a", "b-svc"]
            filled = None
            for row in order:
                if args.quiet_wait:
                    wait_quiet(args.quiet_wait)
                if row == "b-svc":
                    bench.stop_service()
                cache = bench.fresh_cache()
                if row == "c":
                    # c reads a cache a cold run of this round filled (b's, or a run of its own
                    # when b has not run yet this round).
                    if filled is None:
                        filled = bench.fresh_cache()
                        bench.run(1, True, filled)
                    cache = filled
                threads = 2 if row in ("d", "e") else 1
                if row == "f":
                    seconds, failure = bench.run_pair()
                    stats = None
                else:
                    only = ONE_JOB if row == "b1" else ONLY
                    seconds, _, stats, failure = bench.run(threads, row not in ("a", "e"), cache,
                                                           only)
                if row == "b":
                    filled = cache
                if stats:
                    stats_seen[row].add(stats)
                if row == "b-svc":
                    # The service this row started has one warm worker; one untimed two-thread run
                    # leaves it the two that any earlier two-thread program would have, so that
                    # b and d find the service as it is in steady use, not d alone paying a
                    # second worker's start.
                    bench.run(2, True, bench.fresh_cache())
                if failure:
                    failures[row].append(failure)
                    print(f"  {row:<6} {failure}", flush=True)
                else:
                    times[row].append(seconds)
                    round_times.setdefault(round_index, {})[row] = seconds
                    print(f"  {row:<6} {seconds:7.3f} s  {stats or ''}", flush=True)
    finally:
        bench.stop_service()
        shutil.rmtree(scratch, ignore_errors=True)

    print()
    print("| row | what | runs ok / total | median s | min s | vs a (f: 2 x a / f) | hipacm run --stats "
          "(compiles, hits, compiled, failed, passed through) |")
    print("|---|---|---:|---:|---:|---:|---|")
    median = {row: statistics.median(t) for row, t in times.items() if t}
    for row, what in ROWS.items():
        total = len(times[row]) + len(failures[row])
        if not times[row]:
            print(f"| {row} | {what} | 0 / {total} | - | - | - | |")
            continue
        work = 2 if row == "f" else 1  # f does a's work twice
        ratio = f"{work * median['a'] / median[row]:.2f}x" if "a" in median else "-"
        if row == "b1":
            ratio = "(1 of 15 jobs)"
        seen = ", ".join(str(s) for s in sorted(stats_seen[row]))
        print(f"| {row} | {what} | {len(times[row])} / {total} | {median[row]:.3f} | "
              f"{min(times[row]):.3f} | {ratio} | {seen} |")
    for row, found in failures.items():
        for failure in sorted(set(found)):
            print(f"{row}: {found.count(failure)} of {len(times[row]) + len(found)} runs {failure}")

    def floor(name, num, den, wanted):
        if num in median and den in median:
            ratio = median[den] / median[num]
            verdict = "holds" if ratio >= wanted else "MISSED"
            print(f"floor {name}: {den}/{num} = {ratio:.2f}x (floor {wanted}x): {verdict}")
        else:
            print(f"floor {name}: not measured (no successful {num} or {den} run)")

    print()
    floor("cold no slower than plain", "b", "a", 1.0)
    floor("cold, process starts the service, no slower than plain", "b-svc", "a", 1.0)
    floor("cache filled >= 20x plain", "c", "a", 20.0)
    floor("2 threads >= 1.7x own single-thread time (hipacm run)", "d", "b", 1.7)
    floor("2 threads against plain single thread", "d", "a", 1.7)
    paired = [r["b"] / r["d"] for r in round_times.values() if "b" in r and "d" in r]
    if paired:
        print(f"b/d within each round: {', '.join(f'{x:.2f}x' for x in paired)}; median "
              f"{statistics.median(paired):.2f}x")
    if "f" in median and "a" in median:
        print(f"machine's 2-way ceiling for plain hipRTC: 2 x a / f = "
              f"{2 * median['a'] / median['f']:.2f}x")
    print(f"after the rounds: {machine_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
