#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python_bench.py - the Python side of the NVIDIA compile benchmark, on the same generated kernel
set as hipacm-nvidia-bench:

  b       Triton's triton.runtime._async_compile.AsyncCompileMode over a
          concurrent.futures.ThreadPoolExecutor(16); each compile calls NVRTC through
          cuda.bindings.nvrtc and produces a CUBIN for the target arch.
  b-serial  the same compile function in a plain loop (what b parallelises).
  c-cold  CuPy: cupy.RawModule(code=..., backend='nvrtc') compiled one after another with an
          empty CUPY_CACHE_DIR (each run in a fresh interpreter).
  c-warm  the same again with the cache directory c-cold filled.
  h-first hipacm through its Python binding (hipacm.AsyncCompileMode(16), default settings, the
          cache off) in a fresh interpreter, the first of the run: it starts the compile service.
  h       the same in a later fresh interpreter: workers from the running service (the default).
  h-warm  the second batch of an h interpreter: a second mode of the same process.
  h-own   h with HIPACM_ISOLATION=service=off: a fresh interpreter spawns its own 16 workers.
          (h rows need `import hipacm` to find the binding and a plugin: PYTHONPATH,
          HIPACM_LIBRARY, and HIPACM_PYBENCH_LD as the children's LD_LIBRARY_PATH if needed.)

Prints the table format of hipacm-nvidia-bench (with its a row as the baseline when --baseline
names its JSON) and writes the same JSON schema.
"""
import argparse
import functools
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

RESULT_PREFIX = "RESULT "


def load_set(set_dir):
    with open(os.path.join(set_dir, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("schema") != "hipacm-nvidia-bench-set-1":
        raise SystemExit(f"{set_dir}/manifest.json: unknown schema")
    kernels = []
    for entry in manifest["kernels"]:
        with open(os.path.join(set_dir, entry["file"]), encoding="utf-8") as f:
            source = f.read()
        kernels.append(dict(file=entry["file"], source=source, options=entry["options"],
                            name_expressions=entry["name_expressions"]))
    return kernels


def peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# ---- b: NVRTC through cuda.bindings ----

def nvrtc_compile_cubin(kernel, arch):
    """One NVRTC compile to a CUBIN; raises RuntimeError with the log on failure."""
    from cuda.bindings import nvrtc

    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    err, prog = nvrtc.nvrtcCreateProgram(kernel["source"].encode(), kernel["file"].encode(),
                                         0, [], [])
    if err != ok:
        raise RuntimeError(f"{kernel['file']}: nvrtcCreateProgram: {err}")
    try:
        for expr in kernel["name_expressions"]:
            nvrtc.nvrtcAddNameExpression(prog, expr.encode())
        opts = [o.encode() for o in kernel["options"]] + [f"--gpu-architecture={arch}".encode()]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != ok:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(f"{kernel['file']}: {err}\n{log.decode(errors='replace')}")
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        if err != ok or size == 0:
            raise RuntimeError(f"{kernel['file']}: no CUBIN ({err})")
        cubin = b" " * size
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        if err != ok:
            raise RuntimeError(f"{kernel['file']}: nvrtcGetCUBIN: {err}")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def run_triton_async(kernels, arch, threads):
    from concurrent.futures import ThreadPoolExecutor
    from triton.runtime._async_compile import AsyncCompileMode

    done = []
    start = time.perf_counter()
    failed, error = 0, ""
    with ThreadPoolExecutor(threads) as executor:
        try:
            with AsyncCompileMode(executor) as mode:
                for k in kernels:
                    mode.submit(k["file"], functools.partial(nvrtc_compile_cubin, k, arch),
                                done.append)
        except Exception as e:  # Triton re-raises the first failing future from __exit__
            failed, error = len(kernels) - len(done), f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - start
    return dict(seconds=seconds, ok=len(done), failed=failed, from_cache=0,
                host_peak_kib=peak_rss_kib(), worker_peak_kib=0, error=error[:1500])


def run_serial_bindings(kernels, arch):
    ok, failed, error = 0, 0, ""
    start = time.perf_counter()
    for k in kernels:
        try:
            nvrtc_compile_cubin(k, arch)
            ok += 1
        except Exception as e:
            failed += 1
            error = error or str(e)[:1500]
    return dict(seconds=time.perf_counter() - start, ok=ok, failed=failed, from_cache=0,
                host_peak_kib=peak_rss_kib(), worker_peak_kib=0, error=error)


# ---- c: CuPy, one fresh interpreter per run (its cache directory is read from the environment) ----

KERNEL_NAME = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)')


def run_cupy_single(kernels):
    import cupy

    cupy.zeros(1)  # context and NVRTC loaded before the clock starts, as in the C++ variants
    try:
        cupy.cuda.nvrtc.getVersion()
    except Exception:  # noqa: BLE001 - only a warm-up; the first compile then pays the load
        pass
    cache_dir = os.environ["CUPY_CACHE_DIR"]
    before = sum(len(files) for _, _, files in os.walk(cache_dir))
    ok, failed, error = 0, 0, ""
    start = time.perf_counter()
    for k in kernels:
        try:
            module = cupy.RawModule(code=k["source"], options=tuple(k["options"]),
                                    backend="nvrtc",
                                    name_expressions=tuple(k["name_expressions"]) or None)
            names = list(k["name_expressions"]) or KERNEL_NAME.findall(k["source"])
            module.get_function(names[0])  # compiles (or loads from the cache) now
            ok += 1
        except Exception as e:
            failed += 1
            error = error or f"{k['file']}: {type(e).__name__}: {e}"[:1500]
    seconds = time.perf_counter() - start
    after = sum(len(files) for _, _, files in os.walk(cache_dir))
    # CuPy has no per-kernel cache flag: a run that wrote nothing new was served from the cache.
    from_cache = ok if (before > 0 and after == before) else 0
    return dict(seconds=seconds, ok=ok, failed=failed, from_cache=from_cache,
                host_peak_kib=peak_rss_kib(), worker_peak_kib=0, cache_files=after,
                cupy=cupy.__version__, error=error)


def run_single(options, env, timeout):
    """Runs this script again with `options` (a --single-* run) in a fresh interpreter and returns
    the dict of its RESULT line, or one with seconds=None and the reason."""
    cmd = [sys.executable, os.path.abspath(__file__), *options]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(seconds=None, error=f"timed out after {timeout} s")
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    tail = (proc.stdout + proc.stderr)[-1500:]
    return dict(seconds=None, error=f"exit {proc.returncode} without a result: {tail}")


def cupy_child(set_dir, cache_dir, timeout):
    return run_single(["--set", set_dir, "--single-cupy"],
                      dict(os.environ, CUPY_CACHE_DIR=cache_dir), timeout)


# ---- h: hipacm through its Python binding, one fresh interpreter per run ----

def hipacm_batch(hipacm, kernels, arch, threads):
    """One mode: enter, submit every kernel, exit (which collects them all); timed as a whole."""
    start = time.perf_counter()
    with hipacm.AsyncCompileMode(threads, arch=arch, ignore_errors=True) as mode:
        futures = [mode.submit(None, k["source"], name=k["file"], options=k["options"],
                               name_expressions=k["name_expressions"]) for k in kernels]
    seconds = time.perf_counter() - start
    kernels_out = [f.result(ignore_errors=True) for f in futures]
    ok = sum(1 for k in kernels_out if k is not None and k.code)
    error = next((str(f.status) for f, k in zip(futures, kernels_out) if k is None), "")
    return seconds, ok, error


def run_hipacm_single(kernels, arch, threads):
    import hipacm
    cold, ok, error = hipacm_batch(hipacm, kernels, arch, threads)
    warm, warm_ok, warm_error = hipacm_batch(hipacm, kernels, arch, threads)
    return dict(seconds=cold, ok=ok, failed=len(kernels) - ok, warm_seconds=warm, warm_ok=warm_ok,
                warm_failed=len(kernels) - warm_ok, from_cache=0, host_peak_kib=peak_rss_kib(),
                worker_peak_kib=0, worker_spawns=hipacm.stats().worker_spawns,
                error=(error or warm_error)[:1500])


def hipacm_child(args, runtime_dir, own_workers):
    env = dict(os.environ, HIPACM_RUNTIME_DIR=runtime_dir, HIPACM_CACHE="off")
    if os.environ.get("HIPACM_PYBENCH_LD"):
        env["LD_LIBRARY_PATH"] = os.environ["HIPACM_PYBENCH_LD"]
    # Where workers come from is HIPACM_ISOLATION's service= part: the default (none) for h rows,
    # service=off for h-own. The isolation word the bench was given stays; the deprecated
    # HIPACM_COMPILE_SERVICE, which would win, goes.
    env.pop("HIPACM_COMPILE_SERVICE", None)
    items = [item for item in env.pop("HIPACM_ISOLATION", "").split(",")
             if item and not item.startswith("service=")]
    if own_workers:
        items.append("service=off")
    if items:
        env["HIPACM_ISOLATION"] = ",".join(items)
    return run_single(["--set", args.set, "--arch", args.arch, "--threads", str(args.threads),
                       "--single-hipacm"], env, args.timeout)


def services_in(runtime_dir):
    """The pids of the compile services (and their waiting workers) started in runtime_dir."""
    marker = os.path.join(runtime_dir, "compile-service-").encode()
    pids = []
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) > 2 and argv[1] == b"--service" and argv[2].startswith(marker):
            pids.append(pid)
    return pids


def stop_services(runtime_dir):
    """SIGTERMs the compile services started in runtime_dir and waits (up to 5 s) until they and
    their waiting workers are gone, so that nothing of this bench runs on into the next."""
    for pid in services_in(runtime_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + 5
    while services_in(runtime_dir) and time.monotonic() < deadline:
        time.sleep(0.02)


def hipacm_rows(args, kernels):
    # Only the children load the plugin: the libraries it needs may be on HIPACM_PYBENCH_LD alone.
    first, fresh, own = [], [], []
    runtime_dir = tempfile.mkdtemp(prefix="hipacm-pybench-run-")
    os.chmod(runtime_dir, 0o700)
    try:
        first.append(hipacm_child(args, runtime_dir, own_workers=False))
        print(f"round 1 {'h-first':<10} {json.dumps(first[0])[:400]}", flush=True)
        if first[0].get("seconds") is None:
            print("hipacm through Python is unavailable here: no h rows", flush=True)
            return []
        for rnd in range(args.rounds):
            order = [("h", fresh, False), ("h-own", own, True)]
            for name, runs, own_workers in (order if rnd % 2 == 0 else order[::-1]):
                r = hipacm_child(args, runtime_dir, own_workers)
                print(f"round {rnd + 1} {name:<10} {json.dumps(r)[:400]}", flush=True)
                runs.append(r)
    finally:
        stop_services(runtime_dir)
        shutil.rmtree(runtime_dir, ignore_errors=True)

    def warm_of(runs):
        return [dict(r, seconds=r.get("warm_seconds"), ok=r.get("warm_ok", 0),
                     failed=r.get("warm_failed", 1)) for r in runs]

    t = args.threads
    return [summarise("h-first", "h", t, "hipacm Python, first process: starts service",
                      first, len(kernels)),
            summarise("h", "h", t, "hipacm Python, fresh process, default", fresh, len(kernels)),
            summarise("h-warm", "h", t, "hipacm Python, second mode of that process",
                      warm_of(fresh), len(kernels)),
            summarise("h-own", "h", t, "hipacm Python, fresh process, own workers", own,
                      len(kernels)),
            summarise("h-own-warm", "h", t, "h-own, second mode of that process", warm_of(own),
                      len(kernels))]


# ---- summary in hipacm-nvidia-bench's format ----

def summarise(rid, variant, threads, description, runs, total):
    good = [r["seconds"] for r in runs if r.get("seconds") is not None and r.get("failed", 1) == 0]
    return dict(id=rid, variant=variant, threads=threads, description=description, runs=runs,
                min_ok=min([r.get("ok", 0) for r in runs] or [0]) if runs else 0,
                max_from_cache=max([r.get("from_cache", 0) for r in runs] or [0]),
                host_peak_kib=max([r.get("host_peak_kib", 0) or 0 for r in runs] or [0]),
                worker_peak_kib=0,
                first_error=next((r["error"] for r in runs if r.get("error")), ""),
                median_s=statistics.median(good) if good else None,
                min_s=min(good) if good else None)


def print_table(rows, total):
    base = next((r["median_s"] for r in rows if r["id"] == "a" and r["median_s"]), None)
    print(f"\n{'variant':<10} {'what':<44} {'runs':>4} {'median_s':>9} {'min_s':>9} {'ok':>7} "
          f"{'vs_a':>8} {'cached':>6} {'host_MiB':>9} {'worker_MiB':>10}")
    for r in rows:
        med = f"{r['median_s']:.3f}" if r["median_s"] else "-"
        mn = f"{r['min_s']:.3f}" if r["min_s"] else "-"
        speed = f"{base / r['median_s']:.2f}x" if (base and r["median_s"]) else "-"
        ok = f"{r['min_ok']}/{total}"
        print(f"{r['id']:<10} {r['description'][:44]:<44} {len(r['runs']):>4} {med:>9} {mn:>9} "
              f"{ok:>7} {speed:>8} {r['max_from_cache']:>6} {r['host_peak_kib'] / 1024:>9.1f} "
              f"{r['worker_peak_kib'] / 1024:>10.1f}")
    for r in rows:
        if r["first_error"]:
            first = " | ".join(line for line in r["first_error"].splitlines()[:4] if line.strip())
            print(f"first error of {r['id']}: {first[:400]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", required=True, help="kernel set written by hipacm-nvidia-bench --generate")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cupy-rounds", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per CuPy child")
    ap.add_argument("--only", choices=["triton", "cupy", "hipacm"], help="run one part only")
    ap.add_argument("--baseline", help="hipacm-nvidia-bench JSON whose rows are shown too")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--single-cupy", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--single-hipacm", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    kernels = load_set(args.set)

    if args.single_hipacm:
        try:
            result = run_hipacm_single(kernels, args.arch, args.threads)
        except Exception as e:
            result = dict(seconds=None, error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}"[:1500])
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return 0

    if args.single_cupy:
        try:
            result = run_cupy_single(kernels)
        except Exception as e:
            result = dict(seconds=None, error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}"[:1500])
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return 0

    env = dict(python=sys.version.split()[0])
    rows = []
    print(f"python_bench: {len(kernels)} kernels from {args.set}, arch {args.arch}, "
          f"{args.rounds} rounds, {os.cpu_count()} cores", flush=True)

    if args.only in (None, "triton"):
        b_runs, serial_runs = [], []
        try:
            import triton
            from cuda.bindings import nvrtc
            env["triton"] = triton.__version__
            err, major, minor = nvrtc.nvrtcVersion()
            env["nvrtc"] = f"{major}.{minor}"
            print(f"triton {triton.__version__}, NVRTC {major}.{minor} via cuda.bindings", flush=True)
            for rnd in range(args.rounds):
                order = [("b", b_runs), ("b-serial", serial_runs)]
                for name, runs in (order if rnd % 2 == 0 else order[::-1]):
                    try:
                        r = (run_triton_async(kernels, args.arch, args.threads) if name == "b"
                             else run_serial_bindings(kernels, args.arch))
                    except Exception as e:
                        r = dict(seconds=None, error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}"[:1500])
                    print(f"round {rnd + 1} {name:<10} {json.dumps(r)[:400]}", flush=True)
                    runs.append(r)
        except Exception as e:
            msg = f"{type(e).__name__}: {e}"
            print(f"triton/cuda.bindings unavailable: {msg}", flush=True)
            b_runs.append(dict(seconds=None, error=msg))
        rows.append(summarise("b", "b", args.threads,
                              f"Triton AsyncCompileMode, {args.threads} threads, NVRTC",
                              b_runs, len(kernels)))
        rows.append(summarise("b-serial", "b", 1, "cuda.bindings NVRTC, serial loop", serial_runs,
                              len(kernels)))

    if args.only in (None, "cupy"):
        cold, warm = [], []
        root = tempfile.mkdtemp(prefix="hipacm-cupy-bench-")
        try:
            for rnd in range(args.cupy_rounds):
                cache_dir = os.path.join(root, f"round{rnd}")
                os.makedirs(cache_dir)
                for name, runs in (("c-cold", cold), ("c-warm", warm)):
                    r = cupy_child(args.set, cache_dir, args.timeout)
                    print(f"round {rnd + 1} {name:<10} {json.dumps(r)[:400]}", flush=True)
                    runs.append(r)
                    if r.get("cupy"):
                        env["cupy"] = r["cupy"]
        finally:
            shutil.rmtree(root, ignore_errors=True)
        rows.append(summarise("c-cold", "c", 1, "CuPy RawModule(nvrtc) serial, empty cache", cold,
                              len(kernels)))
        rows.append(summarise("c-warm", "c", 1, "CuPy again, same CUPY_CACHE_DIR", warm,
                              len(kernels)))

    if args.only in (None, "hipacm"):
        rows.extend(hipacm_rows(args, kernels))

    shown = list(rows)
    if args.baseline and os.path.exists(args.baseline):
        with open(args.baseline, encoding="utf-8") as f:
            shown = json.load(f)["results"] + rows
    print_table(shown, len(kernels))
    print("(median_s/min_s count only runs where every kernel compiled; vs_a = a's median / this "
          "median; c-warm 'cached' = every kernel when the run wrote no new cache file)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(dict(schema="hipacm-nvidia-bench-1", tool="python_bench.py", arch=args.arch,
                           kernels=len(kernels), rounds=args.rounds, environment=env,
                           results=rows), f, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
