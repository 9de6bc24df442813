#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""run_intercept_bench.py - unchanged programs under `hipacm run` on the 16-core GPU machine, every
ratio against plain runs of the same bench:

  rtc   the intercept tests' ordinary clients (tests/intercept/clients: no hipacm code) compiling
        the generated kernel set (hipacm-nvidia-bench --generate), NVRTC for sm_90 or hipRTC for
        gfx90a. Rows, alternated round by round, each a fresh process:
          a      plain, one thread: the baseline ("the plain single-thread loop")
          p16    plain, --threads threads (NVRTC's own best setup; hipRTC 5.2.3 is not safe when
                 compiles overlap, so a run that crashes or prints another dump is counted, not
                 timed)
          r16    `hipacm run`, --threads threads, empty cache, the compile service running
          c16    `hipacm run`, a fresh process, the cache r16 filled
        plus `first` once: the first `hipacm run` of the bench, which starts the service.
        Each row gives the compile loop's time (the client's --time) and the whole process's.
  cupy  CuPy's RawModule over the same set (python_bench.py's --single-cupy child), its own cache
        directory empty every time: CuPy alone, then under `hipacm run` with hipacm's cache empty
        (fill) and filled (served: the issue's "second Python process").
  jit   PyTorch's jiterator: N elementwise kernels made with torch.cuda.jiterator._create_jit_fn,
        each called once, in a fresh interpreter; PyTorch's own kernel cache off. Plain, then
        under `hipacm run` twice into one cache: the second must be served from it.

Every dump (rtc) is compared with plain one-thread's; `hipacm run --stats` counts hits, compiles
and pass-throughs. The service lives in a private runtime directory that is stopped at the end.

  python3 bench/nvidia/run_intercept_bench.py rtc --set SET --rtc nvrtc --hipacm BUNDLE/hipacm \
      --clients BUNDLE/clients [--rounds 3] [--threads 16] [--json FILE]
  python3 bench/nvidia/run_intercept_bench.py cupy --set SET --hipacm BUNDLE/hipacm
  python3 bench/nvidia/run_intercept_bench.py jit --hipacm BUNDLE/hipacm [--kernels 16]
"""
import argparse
import json
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import python_bench  # noqa: E402  (the set's reader, the CuPy child, the service's cleanup)

LOOP = re.compile(r"client: (\d+) jobs in ([0-9.]+) s")
STATS = re.compile(r"hipacm run: (\d+) compiles?: (\d+) cache hits?, (\d+) compiled, (\d+) failed, "
                   r"(\d+) passed through([^\n]*)")
COMGR_RANDOM = re.compile(r"/comgr-[0-9A-Za-z-]+/")
RESULT = "RESULT "
# Settings of the caller that would change what a user gets by default.
DROPPED = ("HIPACM_CACHE", "HIPACM_CACHE_DIR", "HIPACM_ISOLATION", "HIPACM_COMPILE_SERVICE",
           "HIPACM_RUN_STATS", "HIPACM_MACHINE_JOBS", "HIPACM_HIPRTC_PCH", "HIPACM_IDLE_MS",
           "HIPACM_LOG", "LD_PRELOAD", "CUPY_CACHE_DIR")


class Runner:
    """Fresh processes, plain or under `hipacm run --stats`, in one private runtime directory."""

    def __init__(self, hipacm, timeout):
        self.hipacm = hipacm
        self.timeout = timeout
        self.scratch = Path(tempfile.mkdtemp(prefix="hipacm-run-bench-"))
        self.runtime_dir = self.scratch / "run"
        self.runtime_dir.mkdir(mode=0o700)
        self.env = {k: v for k, v in os.environ.items() if k not in DROPPED}
        self.env["HIPACM_RUNTIME_DIR"] = str(self.runtime_dir)
        self.dirs = 0

    def fresh_dir(self, what):
        self.dirs += 1
        path = self.scratch / f"{what}{self.dirs}"
        path.mkdir()
        return path

    def run(self, argv, hipacm, cache_dir=None, env=None):
        """One process: dict(wall, stdout, stderr, stats, failure)."""
        if hipacm:
            argv = [self.hipacm, "run", "--stats", "--", *argv]
        env = dict(self.env, **(env or {}))
        if cache_dir is not None:
            env["HIPACM_CACHE_DIR"] = str(cache_dir)
        start = time.monotonic()
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True,
                                  timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            return dict(wall=None, stdout="", stderr="", stats=None,
                        failure=f"hung (killed after {self.timeout} s)")
        wall = time.monotonic() - start
        found = STATS.findall(done.stderr)
        stats = None
        if found:
            n = found[-1]
            stats = dict(compiles=int(n[0]), hits=int(n[1]), compiled=int(n[2]), failed=int(n[3]),
                         passed=int(n[4]), why=n[5].strip())
        failure = None
        if done.returncode < 0:
            failure = f"crashed ({signal.Signals(-done.returncode).name})"
        elif done.returncode != 0:
            failure = f"exit {done.returncode}: {done.stderr.strip()[-600:]}"
        return dict(wall=wall, stdout=done.stdout, stderr=done.stderr, stats=stats,
                    failure=failure)

    def close(self):
        python_bench.stop_services(str(self.runtime_dir))
        shutil.rmtree(self.scratch, ignore_errors=True)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(seconds):
    return "-" if seconds is None else f"{seconds:.3f}"


def print_rows(title, rows, baseline, key):
    """rows: [(id, description, runs)]; each run a dict with key (seconds or None) and failure."""
    print(f"\n{title}")
    print(f"{'row':<11} {'ok':>5} {'median s':>9} {'min s':>8} {'vs a':>7}  what")
    base = median([r[key] for r in baseline])
    table = []
    for rid, what, runs in rows:
        good = [r[key] for r in runs if r.get("failure") is None and r.get(key) is not None]
        med = median(good)
        ratio = base / med if base and med else None
        print(f"{rid:<11} {len(good):>2}/{len(runs):<2} {fmt(med):>9} "
              f"{fmt(min(good) if good else None):>8} "
              f"{'-' if ratio is None else f'{ratio:.2f}x':>7}  {what}")
        table.append(dict(id=rid, what=what, ok=len(good), runs=len(runs), median_s=med,
                          vs_a=ratio))
    return table


def show(rnd, rid, run):
    stats = run.get("stats")
    print(f"round {rnd} {rid:<6} wall {fmt(run.get('wall'))} loop {fmt(run.get('loop'))}"
          f"{'' if stats is None else ' stats ' + json.dumps(stats)}"
          f"{'' if run.get('failure') is None else ' FAILED: ' + run['failure']}", flush=True)


# ---- rtc: the C++ clients over the kernel set ----

def client_manifest(set_dir, rtc, arch):
    """Writes the set as the client's manifest (nvrtc_client.cpp's jobs or the hipRTC clients'
    kernels, the schema `hipacm warmup` reads) and returns its path."""
    kernels = python_bench.load_set(set_dir)
    if rtc == "nvrtc":
        doc = {"jobs": [{"name": k["file"], "source": k["file"],
                         "options": [*k["options"], f"-arch={arch}"],
                         "expressions": k["name_expressions"], "outputs": ["cubin"]}
                        for k in kernels]}
    else:  # the hipRTC clients add --offload-arch=gfx90a themselves
        doc = {"kernels": [{"source": k["file"], "options": k["options"], "headers": {},
                            "name_expressions": k["name_expressions"]} for k in kernels]}
    path = Path(set_dir) / f"run-{rtc}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path, len(kernels)


def rtc_bench(args):
    manifest, count = client_manifest(args.set, args.rtc, args.arch)
    client = Path(args.clients) / ("hipacm_intercept_nvrtc_linked_client" if args.rtc == "nvrtc"
                                   else "hipacm_intercept_dlopen_client")
    runner = Runner(args.hipacm, args.timeout)
    reference = None

    def one(threads, hipacm, cache_dir=None):
        argv = [str(client), "--threads", str(threads), "--time", str(manifest)]
        run = runner.run(argv, hipacm, cache_dir)
        loop = LOOP.findall(run["stderr"])
        run["loop"] = float(loop[-1][1]) if loop else None
        dump = COMGR_RANDOM.sub("/comgr-X/", run["stdout"])
        if run["failure"] is None and reference is not None and dump != reference:
            run["failure"] = "dump differs from plain one-thread's"
        if run["failure"] is None and run["loop"] is None:
            run["failure"] = "no loop time: " + run["stderr"][-300:]
        run["dump"] = dump
        return run

    rows = {rid: [] for rid in ("a", "p16", "first", "r16", "c16")}
    try:
        first_plain = one(1, False)
        if first_plain["failure"] is not None:
            print(f"the plain client fails here: {first_plain['failure']}")
            return 1
        reference = first_plain["dump"]
        print(f"{count} kernels, {args.rtc} {args.arch}; plain dump {len(reference)} bytes, "
              f"{reference.count('compile ')} compiles", flush=True)
        run = one(args.threads, True, runner.fresh_dir("cache"))
        rows["first"].append(run)
        show(0, "first", run)
        for rnd in range(1, args.rounds + 1):
            cache = runner.fresh_dir("cache")
            order = ["a", "p16", "r16", "c16"]
            if rnd % 2 == 0:
                order = ["r16", "c16", "p16", "a"]
            for rid in order:
                if rid == "a":
                    run = one(1, False)
                elif rid == "p16":
                    run = one(args.threads, False)
                else:  # r16 fills this round's cache; c16 reads it
                    run = one(args.threads, True, cache)
                    want = "compiled" if rid == "r16" else "hits"
                    stats = run["stats"]
                    if run["failure"] is None and (stats is None or stats[want] != count):
                        run["failure"] = f"--stats: {stats} (want {count} {want})"
                rows[rid].append(run)
                show(rnd, rid, run)
    finally:
        runner.close()
    t = args.threads
    described = [("a", "plain, 1 thread: the baseline", rows["a"]),
                 ("p16", f"plain, {t} threads", rows["p16"]),
                 ("first", f"hipacm run, {t} threads, first: starts the service", rows["first"]),
                 ("r16", f"hipacm run, {t} threads, empty cache, service running", rows["r16"]),
                 ("c16", f"hipacm run, {t} threads, fresh process, cache filled", rows["c16"])]
    title = f"{args.rtc} {args.arch}, {count} kernels"
    loop = print_rows(f"{title}: the compile loop (client --time)", described, rows["a"], "loop")
    wall = print_rows(f"{title}: the whole process, timed from outside", described, rows["a"],
                      "wall")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(bench="rtc", rtc=args.rtc, arch=args.arch,
                                                   kernels=count, threads=t, loop=loop, wall=wall),
                                              indent=1) + "\n", encoding="utf-8")
    return 0


# ---- cupy: python_bench.py's CuPy child, plain and under hipacm run ----

def python_child(runner, argv, hipacm, cache_dir, env):
    run = runner.run([sys.executable, *argv], hipacm, cache_dir, env)
    result = None
    for line in run["stdout"].splitlines():
        if line.startswith(RESULT):
            result = json.loads(line[len(RESULT):])
    if run["failure"] is None and result is None:
        run["failure"] = "no result: " + (run["stdout"] + run["stderr"])[-600:]
    run["loop"] = result.get("seconds") if result else None
    if run["failure"] is None and run["loop"] is None:
        run["failure"] = f"no time: {result.get('error', '')[:600]}"
    if run["failure"] is None and result.get("failed"):
        run["failure"] = f"{result['failed']} failed: {result.get('error', '')[:300]}"
    run["result"] = result
    return run


def second_process_rows(args, runner, argv, count, child_env):
    """Rounds of three fresh interpreters: the program alone, then under `hipacm run` twice into
    one cache (fill: every compile compiled; served: every one a hit). child_env() gives each its
    own settings. Returns {row: [runs]}."""
    rows = {rid: [] for rid in ("alone", "fill", "served")}
    try:
        for rnd in range(1, args.rounds + 1):
            cache = runner.fresh_dir("cache")
            for rid in ("alone", "fill", "served"):
                run = python_child(runner, argv, rid != "alone", cache, child_env())
                stats = run["stats"]
                want = {"fill": "compiled", "served": "hits"}.get(rid)
                if want and run["failure"] is None and (stats is None or stats[want] < count):
                    run["failure"] = f"--stats: {stats} (want {count} {want})"
                rows[rid].append(run)
                show(rnd, rid, run)
    finally:
        runner.close()
    return rows


def cupy_bench(args):
    runner = Runner(args.hipacm, args.timeout)
    count = len(python_bench.load_set(args.set))
    argv = [str(Path(python_bench.__file__)), "--set", args.set, "--single-cupy"]
    # CuPy's default names each program by a fresh temporary file; its in-memory cache names none.
    memory = {"CUPY_CACHE_IN_MEMORY": "1"} if args.cupy_in_memory else {}
    rows = second_process_rows(
        args, runner, argv, count,
        lambda: dict(memory, CUPY_CACHE_DIR=str(runner.fresh_dir("cupy"))))
    described = [("alone", "CuPy alone, its cache empty", rows["alone"]),
                 ("fill", "under hipacm run, both caches empty", rows["fill"]),
                 ("served", "under hipacm run, a second process: CuPy's cache empty, hipacm's "
                  "filled", rows["served"])]
    title = f"CuPy RawModule, {count} kernels{', CUPY_CACHE_IN_MEMORY=1' if memory else ''}"
    loop = print_rows(f"{title}: the compile loop", described, rows["alone"], "loop")
    wall = print_rows(f"{title}: the whole interpreter, timed from outside", described,
                      rows["alone"], "wall")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(bench="cupy", kernels=count, loop=loop,
                                                   wall=wall), indent=1) + "\n", encoding="utf-8")
    return 0


# ---- jit: PyTorch's jiterator ----

JITERATOR_CHILD = r"""
import json, sys, time
import torch
count = int(sys.argv[1])
x = torch.arange(1024, device="cuda", dtype=torch.float32)
torch.cuda.synchronize()
fns = []
for i in range(count):
    code = ("template <typename T> T hipacm_jit_%d(T x, T y) { return x * T(%d) + y / T(%d); }"
            % (i, i + 2, i + 3))
    fns.append((i, torch.cuda.jiterator._create_jit_fn(code)))
start = time.perf_counter()
bad = 0
for i, fn in fns:
    out = fn(x, x)
    want = x * (i + 2) + x / (i + 3)
    bad += int(not torch.allclose(out, want))
torch.cuda.synchronize()
print("RESULT " + json.dumps(dict(seconds=time.perf_counter() - start, ok=count - bad, failed=bad,
                                  torch=torch.__version__)))
"""


def jit_bench(args):
    runner = Runner(args.hipacm, args.timeout)
    script = runner.scratch / "jiterator_child.py"
    script.write_text(JITERATOR_CHILD, encoding="utf-8")
    argv = [str(script), str(args.kernels)]
    # PyTorch's own disk cache of jiterator kernels off, so that every process compiles.
    rows = second_process_rows(
        args, runner, argv, args.kernels,
        lambda: {"USE_PYTORCH_KERNEL_CACHE": "0",
                 "PYTORCH_KERNEL_CACHE_PATH": str(runner.fresh_dir("torch"))})
    described = [("alone", "PyTorch jiterator alone", rows["alone"]),
                 ("fill", "under hipacm run, cache empty", rows["fill"]),
                 ("served", "under hipacm run, a second process, cache filled", rows["served"])]
    title = f"PyTorch jiterator, {args.kernels} kernels, first call of each"
    loop = print_rows(f"{title}: the calls", described, rows["alone"], "loop")
    wall = print_rows(f"{title}: the whole interpreter", described, rows["alone"], "wall")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(bench="jit", kernels=args.kernels, loop=loop,
                                                   wall=wall), indent=1) + "\n", encoding="utf-8")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", choices=["rtc", "cupy", "jit"])
    ap.add_argument("--hipacm", required=True, help="the hipacm command")
    ap.add_argument("--set", help="the generated kernel set (rtc, cupy)")
    ap.add_argument("--rtc", choices=["nvrtc", "hiprtc"], default="nvrtc")
    ap.add_argument("--arch", help="default: sm_90 for NVRTC, gfx90a for hipRTC")
    ap.add_argument("--clients", help="the folder of the intercept test clients (rtc)")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kernels", type=int, default=16, help="jiterator kernels (jit)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds for one process")
    ap.add_argument("--cupy-in-memory", action="store_true",
                    help="cupy: CuPy's in-memory cache (CUPY_CACHE_IN_MEMORY=1)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.arch is None:
        args.arch = "sm_90" if args.rtc == "nvrtc" else "gfx90a"
    if args.bench in ("rtc", "cupy") and not args.set:
        ap.error("--set is needed")
    if args.bench == "rtc" and not args.clients:
        ap.error("--clients is needed")
    return {"rtc": rtc_bench, "cupy": cupy_bench, "jit": jit_bench}[args.bench](args)


if __name__ == "__main__":
    sys.exit(main())
