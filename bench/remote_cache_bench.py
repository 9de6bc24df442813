#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""remote_cache_bench.py - the remote cache tier (docs/CACHE.md, "Remote tier") on a private Redis:
what a fresh machine pays to warm from it, what a remote hit costs, how many compiles a fleet
makes, and what a Redis killed mid-run costs.

  /usr/bin/python3 bench/remote_cache_bench.py [--build build/release] [--count 64]
      [--arch gfx90a] [--jobs 0] [--compile-rounds 1] [--warm-runs 5] [--machines 8]
      [--fetch-rounds 20] [--kill-after-hits 8] [--machine-jobs N] [--json FILE]

Needs redis-server and the build's hipacm-cli, hipacm-worker and hipacm-remote-fetch-bench
targets (without the last, rows d and the fetch loops of g say they were not measured). About
2.5 minutes on 2 cores with the defaults and --compile-rounds 2.

Starts redis-server on 127.0.0.1 on a free port (password from a 0600 file, given to redis-server
in a 0600 config file, never on a command line; `save ""`, `appendonly no`), makes a 0600 HMAC
key file and COUNT distinct kernels (bench/common/kernel_variants.sh), and runs `hipacm warmup`
as whole processes, timed from outside. Each "machine" is an empty HIPACM_CACHE_DIR; all share
one private HIPACM_RUNTIME_DIR (the machine budget and the remembered library facts of this box),
except the row that says it starts with an empty one too. Rows:

  a. compile: a fresh cache compiling all COUNT with no remote (the baseline), and a writer
     (HIPACM_REMOTE_CACHE_MODE=read-write with the key) into another fresh cache, which also
     publishes every entry (Redis emptied first); --compile-rounds of each, alternated;
  b. local hits: the writer's cache warmed again, --warm-runs times, with no remote and with the
     remote configured (a local hit never asks it);
  c. a fresh machine warming from Redis (read, with the key), alternated with b,
     each into a new empty cache: against b (target: within 3x) and a (target: >= 20x faster);
     beside it, the same served without being stored locally (HIPACM_CACHE=read), a control that
     fills a fresh cache from a HIPACM_SYSTEM_CACHE (no remote: what a fresh cache directory costs
     by itself), and once with an empty runtime directory too;
  h. the other way to fill a fresh machine: the writer's cache exported to a file once, each
     run importing it into a fresh cache (`hipacm cache import`) and warming from that;
  d. one remote hit: hipacm-remote-fetch-bench timing RemoteTier::fetch of every entry, rounds
     times (target: median <= about 1 ms);
  e. --machines fresh readers warming at once after the writer: compiles between them (target 0);
  f. --machines fresh readers started together with a fresh writer (Redis emptied first):
     compiles among the readers (target <= 2 x COUNT) and the writer's;
  g. Redis SIGKILLed while a fresh reader warms (entries present): the run's wall time and that
     every kernel came back; then, on a new Redis, the same with Redis SIGSTOPped (a server that
     hangs: every call waits for the timeout until the circuit breaker opens), and the fetch
     bench looping across a SIGSTOP and across a SIGKILL: the slowest fetch after each against
     the timeout.

Prints a table and, with --json, writes the measurements there.
"""
import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "common"))
from private_redis import SERVERS, Redis, private_file  # noqa: E402


class Bench:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.hipacm = Path(args.build) / "hipacm"
        self.fetch_bench_path = Path(args.build) / "hipacm-remote-fetch-bench"
        if not self.hipacm.is_file():
            sys.exit(f"no {self.hipacm}: build the hipacm-cli target first")
        self.kernels = work / "kernels"
        subprocess.run(["bash", "-c", 'source bench/common/kernel_variants.sh && '
                        'make_kernel_variants "$1" "$2"', "-", str(self.kernels),
                        str(args.count)], cwd=ROOT, check=True)
        self.password_file = work / "redis.password"
        private_file(self.password_file, secrets.token_hex(24) + "\n")
        self.key_file = work / "hmac.key"
        private_file(self.key_file, secrets.token_hex(32) + "\n")
        self.caches = 0
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("HIPACM_REMOTE_CACHE") and k not in ("HIPACM_CACHE",
                                                                        "HIPACM_CACHE_DIR")}
        # As bench/common/bench_setup.sh: workers spawned by each process unless the caller chose.
        iso = env.get("HIPACM_ISOLATION", "")
        if "HIPACM_COMPILE_SERVICE" not in env and "service=" not in iso:
            env["HIPACM_ISOLATION"] = f"{iso},service=off" if iso else "service=off"
        env["HIPACM_RUNTIME_DIR"] = str(work / "run")
        # The machine budget of this box, which every simulated machine shares.
        env["HIPACM_MACHINE_JOBS"] = str(args.machine_jobs or os.cpu_count() or 1)
        self.env = env
        self.redis = None

    def fresh_cache(self, name):
        self.caches += 1
        return self.work / f"cache-{self.caches}-{name}"

    def remote_env(self, mode, key=True):
        env = dict(self.env, HIPACM_REMOTE_CACHE=self.redis.url(),
                   HIPACM_REMOTE_CACHE_PASSWORD_FILE=str(self.password_file),
                   HIPACM_REMOTE_CACHE_MODE=mode)
        if key:
            env["HIPACM_REMOTE_CACHE_KEY_FILE"] = str(self.key_file)
        return env

    def start_warmup(self, cache, env, report):
        cmd = [str(self.hipacm), "warmup", str(self.kernels), "--arch", self.args.arch, "--jobs",
               str(self.args.jobs), "--quiet", "--json", str(report)]
        err = open(str(report) + ".stderr", "w")
        proc = subprocess.Popen(cmd, env=dict(env, HIPACM_CACHE_DIR=str(cache)),
                                stdout=subprocess.DEVNULL, stderr=err)
        err.close()
        return proc

    def finish(self, proc, report, start):
        rc = proc.wait()
        seconds = time.monotonic() - start
        if rc != 0 and not Path(report).is_file():
            tail = Path(str(report) + ".stderr").read_text()[-1500:]
            raise RuntimeError(f"hipacm warmup exited {rc} without a report: {tail}")
        data = json.loads(Path(report).read_text())
        return {"seconds": seconds, "exit": rc, "totals": data["totals"],
                "kernels": data.get("kernels", [])}

    def warm(self, cache, env, name):
        report = self.work / f"{name}.json"
        start = time.monotonic()
        proc = self.start_warmup(cache, env, report)
        return self.finish(proc, report, start)

    def warm_together(self, runs):
        """runs: [(cache, env, name)], all started at once; returns their results and the time
        until the last exits."""
        start = time.monotonic()
        procs = [(self.start_warmup(c, e, self.work / f"{n}.json"), self.work / f"{n}.json")
                 for c, e, n in runs]
        results = [self.finish(p, r, start) for p, r in procs]
        return results, time.monotonic() - start

    def flush(self):
        client = self.redis.client()
        client.call("FLUSHALL")
        client.close()

    def entries(self):
        client = self.redis.client()
        n = client.count_keys("hipacm:v1:entry:*")
        client.close()
        return n

    def fetch_bench(self, extra):
        if not self.fetch_bench_path.is_file():
            return None, f"no {self.fetch_bench_path}: build the hipacm-remote-fetch-bench target"
        return subprocess.Popen([str(self.fetch_bench_path), *extra], env=self.remote_env("read"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), None


def check_all_served(result, what):
    t = result["totals"]
    if t["failed"] or t["kernels"] != t["cache_hits"] + t["compiled"]:
        raise RuntimeError(f"{what}: {t['failed']} of {t['kernels']} kernels failed")


def remote_count(totals, name):
    """A remote counter of the warmup report's totals (remote_hits, remote_waits); None when the
    report has none."""
    value = totals.get(name)
    return value if isinstance(value, int) else None


def reader_across(b, args, fault, name):
    """A fresh reader warming from Redis, which is killed or stopped once the reader has had
    --kill-after-hits entries from it."""
    entries = b.entries()
    watcher = b.redis.client()
    hits_before = watcher.info_field("stats", "keyspace_hits") or 0
    report = b.work / f"{name}.json"
    start = time.monotonic()
    proc = b.start_warmup(b.fresh_cache(name), b.remote_env("read"), report)
    fault_at, hits_at_fault = None, None
    while proc.poll() is None:
        hits = (watcher.info_field("stats", "keyspace_hits") or 0) - hits_before
        if hits >= args.kill_after_hits:
            b.redis.fault(fault)
            fault_at, hits_at_fault = time.monotonic() - start, hits
            break
        time.sleep(0.0005)
    watcher.close()
    result = b.finish(proc, report, start)
    check_all_served(result, f"reader with Redis {fault}ed")
    t = result["totals"]
    return {"fault": fault, "entries": entries, "fault_at": fault_at,
            "hits_at_fault": hits_at_fault, "seconds": result["seconds"],
            "kernels": t["kernels"], "cache_hits": t["cache_hits"],
            "remote_hits": remote_count(t, "remote_hits"), "compiled": t["compiled"],
            "failed": t["failed"], "exit": result["exit"],
            "stderr": [line for line in Path(str(report) + ".stderr").read_text().splitlines()
                       if line.strip()]}


def fetch_across(b, fault):
    """The fetch bench looping for 1.5 s, Redis killed or stopped 0.3 s after its first pass."""
    proc, missing = b.fetch_bench(["--duration-ms", "1500"])
    if proc is None:
        return {"skipped": missing}
    ready = proc.stdout.readline()
    if '"ready"' not in ready:
        raise RuntimeError(f"fetch bench: {ready!r} {proc.stderr.read()[-1500:]}")
    time.sleep(0.3)
    b.redis.fault(fault)
    stdout, stderr = proc.communicate(timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"fetch bench exited {proc.returncode}: {stderr[-1500:]}")
    return dict(json.loads(stdout.strip().splitlines()[-1]), fault=fault)


def run(args, work):
    b = Bench(args, work)
    count, machines = args.count, args.machines
    out = {"count": count, "arch": args.arch, "jobs": args.jobs, "cpus": os.cpu_count(),
           "machine_jobs": b.env["HIPACM_MACHINE_JOBS"]}
    b.redis = Redis(work, "redis1", b.password_file)
    out["redis_version"] = b.redis.version

    # a. The baseline compile and the writer, alternated over the rounds; Redis is emptied before
    # each writer, which would otherwise be served what the last one put.
    bases, writers = [], []
    for i in range(args.compile_rounds):
        for row in (("base", "writer") if i % 2 == 0 else ("writer", "base")):
            if row == "base":
                r = b.warm(b.fresh_cache("baseline"), b.env, f"a-baseline{i}")
                check_all_served(r, "baseline")
                bases.append(r)
            else:
                b.flush()
                writer_cache = b.fresh_cache("writer")
                r = b.warm(writer_cache, b.remote_env("read-write"), f"a-writer{i}")
                check_all_served(r, "writer")
                writers.append(r)
    base_med = statistics.median(r["seconds"] for r in bases)
    out["a"] = {"baseline": [r["seconds"] for r in bases], "baseline_median": base_med,
                "baseline_compiled": [r["totals"]["compiled"] for r in bases],
                "writer": [r["seconds"] for r in writers],
                "writer_median": statistics.median(r["seconds"] for r in writers),
                "writer_compiled": [r["totals"]["compiled"] for r in writers],
                "entries_after_writer": b.entries()}

    # b and c, alternated: local hits (also with the remote configured, which they never ask), a
    # fresh machine from Redis, and one served from Redis without storing (HIPACM_CACHE=read).
    rows = {"local": [], "local_remote_set": [], "fresh": [], "fresh_no_store": [],
            "fresh_system_cache": []}
    for i in range(args.warm_runs):
        order = list(rows) if i % 2 == 0 else list(reversed(rows))
        for row in order:
            if row == "local":
                r = b.warm(writer_cache, b.env, f"b-local{i}")
            elif row == "local_remote_set":
                r = b.warm(writer_cache, b.remote_env("read"), f"b-local-remote{i}")
            elif row == "fresh":
                r = b.warm(b.fresh_cache("fresh"), b.remote_env("read"), f"c-fresh{i}")
            elif row == "fresh_system_cache":
                r = b.warm(b.fresh_cache("fresh-system"),
                           dict(b.env, HIPACM_SYSTEM_CACHE=str(writer_cache)), f"c-fresh-system{i}")
            else:
                r = b.warm(b.fresh_cache("fresh-read"),
                           dict(b.remote_env("read"), HIPACM_CACHE="read"), f"c-fresh-read{i}")
            check_all_served(r, row)
            if row.startswith("local") and r["totals"]["cache_hits"] != count:
                raise RuntimeError("a local-hit run missed its cache")
            rows[row].append(r)
    # A fresh machine that also starts with an empty runtime directory (no remembered facts).
    cold_env = dict(b.remote_env("read"), HIPACM_RUNTIME_DIR=str(work / "run-cold"))
    cold = b.warm(b.fresh_cache("fresh-cold"), cold_env, "c-fresh-cold")
    check_all_served(cold, "fresh machine, fresh runtime dir")
    med = {row: statistics.median(r["seconds"] for r in rs) for row, rs in rows.items()}
    fresh = rows["fresh"]
    wall = {row: statistics.median(r["totals"]["wall_seconds"] for r in rs)
            for row, rs in rows.items()}
    out["b"] = {"seconds": [r["seconds"] for r in rows["local"]], "median": med["local"],
                "warmup_wall_median": wall["local"],
                "remote_set_seconds": [r["seconds"] for r in rows["local_remote_set"]],
                "remote_set_median": med["local_remote_set"]}
    out["c"] = {"seconds": [r["seconds"] for r in fresh], "median": med["fresh"],
                "warmup_wall_median": wall["fresh"],
                "system_cache_seconds": [r["seconds"] for r in rows["fresh_system_cache"]],
                "system_cache_median": med["fresh_system_cache"],
                "system_cache_warmup_wall_median": wall["fresh_system_cache"],
                "compiled": [r["totals"]["compiled"] for r in fresh],
                "cache_hits": [r["totals"]["cache_hits"] for r in fresh],
                "remote_hits": [remote_count(r["totals"], "remote_hits") for r in fresh],
                "vs_local": med["fresh"] / med["local"], "vs_compile": base_med / med["fresh"],
                "no_store_seconds": [r["seconds"] for r in rows["fresh_no_store"]],
                "no_store_median": med["fresh_no_store"],
                "no_store_compiled": [r["totals"]["compiled"] for r in rows["fresh_no_store"]],
                "fresh_runtime_dir": {"seconds": cold["seconds"],
                                      "compiled": cold["totals"]["compiled"]}}

    # h. The same kernels shipped as a file instead: exported once, imported into a fresh cache
    # and warmed from it (the other way to fill a fresh machine, CLUSTER.md).
    export = work / "kernels.hipacm"
    start = time.monotonic()
    subprocess.run([str(b.hipacm), "cache", "export", str(export)], check=True,
                   env=dict(b.env, HIPACM_CACHE_DIR=str(writer_cache)), stdout=subprocess.DEVNULL)
    export_seconds = time.monotonic() - start
    imports, import_warms = [], []
    for i in range(args.warm_runs):
        cache = b.fresh_cache("import")
        start = time.monotonic()
        subprocess.run([str(b.hipacm), "cache", "import", str(export)], check=True,
                       env=dict(b.env, HIPACM_CACHE_DIR=str(cache)), stdout=subprocess.DEVNULL)
        imports.append(time.monotonic() - start)
        r = b.warm(cache, b.env, f"h-import-warm{i}")
        if r["totals"]["cache_hits"] != count:
            raise RuntimeError("a warmup after an import missed its cache")
        import_warms.append(r["seconds"])
    out["h"] = {"export_seconds": export_seconds, "export_bytes": export.stat().st_size,
                "import_seconds": imports, "import_median": statistics.median(imports),
                "warm_after_import_seconds": import_warms,
                "warm_after_import_median": statistics.median(import_warms),
                "import_and_warm_median": statistics.median(
                    i + w for i, w in zip(imports, import_warms))}

    # d. One remote hit, timed in-process.
    proc, missing = b.fetch_bench(["--rounds", str(args.fetch_rounds)])
    if proc is None:
        out["d"] = {"skipped": missing}
    else:
        stdout, stderr = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"fetch bench exited {proc.returncode}: {stderr[-1500:]}")
        out["d"] = json.loads(stdout.strip().splitlines()[-1])

    # e. MACHINES fresh readers after the writer.
    results, seconds = b.warm_together(
        [(b.fresh_cache(f"e{i}"), b.remote_env("read"), f"e-reader{i}") for i in range(machines)])
    for r in results:
        check_all_served(r, "reader after the writer")
    out["e"] = {"seconds": seconds, "compiled": [r["totals"]["compiled"] for r in results]}

    # f. MACHINES fresh readers together with a fresh writer, on an emptied Redis.
    b.flush()
    runs = [(b.fresh_cache("f-writer"), b.remote_env("read-write"), "f-writer")]
    runs += [(b.fresh_cache(f"f{i}"), b.remote_env("read"), f"f-reader{i}")
             for i in range(machines)]
    results, seconds = b.warm_together(runs)
    for r in results:
        check_all_served(r, "reader beside the writer")
    out["f"] = {"seconds": seconds, "writer_compiled": results[0]["totals"]["compiled"],
                "readers_compiled": [r["totals"]["compiled"] for r in results[1:]],
                "readers_remote_hits": [remote_count(r["totals"], "remote_hits")
                                        for r in results[1:]],
                "readers_remote_waits": [remote_count(r["totals"], "remote_waits")
                                         for r in results[1:]],
                "entries_after": b.entries()}

    # g. Redis killed (SIGKILL) while a fresh reader warms from it; then, on a new Redis filled
    # by a writer, stopped (SIGSTOP: a server that hangs) during a reader, and the fetch bench
    # looping across a stop and across a kill.
    out["g"] = reader_across(b, args, "kill", "g-reader")
    b.redis = Redis(work, "redis2", b.password_file)
    refill = b.warm(b.fresh_cache("g-writer"), b.remote_env("read-write"), "g-writer")
    check_all_served(refill, "writer refilling Redis")
    out["g_stop"] = reader_across(b, args, "stop", "g-stop-reader")
    b.redis.resume()
    out["g2_stop"] = fetch_across(b, "stop")
    b.redis.resume()
    out["g2"] = fetch_across(b, "kill")
    return out


def ms(seconds):
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.3f} s"


def print_table(out):
    n, m = out["count"], len(out["e"]["compiled"])
    a, c = out["a"], out["c"]
    print(f"remote cache tier: {n} kernels, {out['arch']}, --jobs {out['jobs']}, "
          f"{out['cpus']} CPUs, HIPACM_MACHINE_JOBS={out['machine_jobs']}, "
          f"Redis {out['redis_version']} on loopback")
    print(f"a  compile, fresh cache, no remote (baseline): median {ms(a['baseline_median'])} "
          f"({', '.join(ms(x) for x in a['baseline'])}), compiled {a['baseline_compiled']}")
    print(f"a  writer, fresh cache, read-write: median {ms(a['writer_median'])} "
          f"({', '.join(ms(x) for x in a['writer'])}; "
          f"{a['writer_median'] / a['baseline_median']:.2f}x the baseline), compiled "
          f"{a['writer_compiled']}, {a['entries_after_writer']} entries in Redis")
    print(f"b  local hits, median of {len(out['b']['seconds'])}: {ms(out['b']['median'])} "
          f"({', '.join(ms(s) for s in out['b']['seconds'])})")
    print(f"b  local hits with the remote configured: {ms(out['b']['remote_set_median'])} "
          f"({', '.join(ms(s) for s in out['b']['remote_set_seconds'])})")
    print(f"c  fresh machine from Redis, median of {len(c['seconds'])}: {ms(c['median'])} "
          f"({', '.join(ms(s) for s in c['seconds'])}); compiled {c['compiled']}, "
          f"remote hits {c['remote_hits']}")
    print(f"c  = {c['vs_local']:.2f}x the local-hit run (target <= 3x); "
          f"{c['vs_compile']:.0f}x faster than compiling (target >= 20x)")
    print(f"c  the tool's own warmup wall (its report), median: local hits "
          f"{ms(out['b']['warmup_wall_median'])}, fresh from Redis {ms(c['warmup_wall_median'])}"
          f", fresh from a system cache {ms(c['system_cache_warmup_wall_median'])}")
    print(f"c  control, a fresh cache dir served from HIPACM_SYSTEM_CACHE (no remote): "
          f"{ms(c['system_cache_median'])} ({', '.join(ms(s) for s in c['system_cache_seconds'])})")
    print(f"c  served from Redis without storing (HIPACM_CACHE=read): {ms(c['no_store_median'])} "
          f"({', '.join(ms(s) for s in c['no_store_seconds'])}), compiled {c['no_store_compiled']}")
    fr = c["fresh_runtime_dir"]
    print(f"c  fresh machine with an empty runtime directory too: {ms(fr['seconds'])}, "
          f"compiled {fr['compiled']}")
    h = out["h"]
    print(f"h  export file instead ({h['export_bytes']} bytes, exported in "
          f"{ms(h['export_seconds'])}): import into a fresh cache {ms(h['import_median'])}, then "
          f"warm {ms(h['warm_after_import_median'])}; import + warm, median "
          f"{ms(h['import_and_warm_median'])}")
    d = out["d"]
    if "skipped" in d:
        print(f"d  remote hit: not measured ({d['skipped']})")
    else:
        h = d["hits"]
        print(f"d  one remote hit (RemoteTier::fetch), {h['count']} fetches of {d['entries']} "
              f"entries: median {h['median_ms']:.3f} ms, p90 {h['p90_ms']:.3f} ms, "
              f"p99 {h['p99_ms']:.3f} ms, max {h['max_ms']:.3f} ms; first (connects) "
              f"{d['first_fetch_ms']:.3f} ms; not hits {d['not_hits']['count']}")
    e = out["e"]
    print(f"e  {m} fresh readers after the writer: {sum(e['compiled'])} compiles between them "
          f"{e['compiled']} (target 0), {ms(e['seconds'])}")
    f = out["f"]
    print(f"f  {m} fresh readers with a writer: readers compiled {sum(f['readers_compiled'])} "
          f"{f['readers_compiled']} (target <= {2 * n}), writer compiled {f['writer_compiled']}, "
          f"{ms(f['seconds'])}; {f['entries_after']} entries in Redis after")
    print(f"f  the readers' remote hits {f['readers_remote_hits']}, of them after waiting for the "
          f"writer's claim {f['readers_remote_waits']}")
    for key in ("g", "g_stop"):
        g = out[key]
        what = "SIGKILLed" if g["fault"] == "kill" else "SIGSTOPped"
        when = (f"at {ms(g['fault_at'])}, after {g['hits_at_fault']} Redis hits"
                if g["fault_at"] is not None else "never: the run ended first")
        print(f"g  Redis {what} during a fresh reader ({g['entries']} entries) {when}; run "
              f"{ms(g['seconds'])}, exit {g['exit']}, {g['kernels']} kernels: {g['cache_hits']} "
              f"from the cache ({g['remote_hits']} remote hits), {g['compiled']} compiled, "
              f"{g['failed']} failed; {len(g['stderr'])} lines on stderr")
        for line in g["stderr"][:3]:
            print(f"g    {line}")
    for key in ("g2_stop", "g2"):
        g2 = out[key]
        if "skipped" in g2:
            print(f"g  fetch loop across a fault: not measured ({g2['skipped']})")
            continue
        nh = g2["not_hits"]
        slowest = (f"slowest {nh['max_ms']:.3f} ms, p99 {nh['p99_ms']:.4f} ms, median "
                   f"{nh['median_ms']:.4f} ms" if nh["count"] else "none")
        what = "SIGKILL" if g2["fault"] == "kill" else "SIGSTOP"
        print(f"g  fetch loop across a {what} (timeout {g2['timeout_ms']} ms): "
              f"{g2['hits']['count']} hits before it, {nh['count']} fetches after ({slowest}); "
              f"{g2['not_hits_at_timeout']} waited for the timeout, "
              f"{g2['not_hits_over_1_2x_timeout']} over 1.2x it")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--arch", default="gfx90a")
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--compile-rounds", type=int, default=1,
                        help="a: baseline and writer runs, alternated")
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--machine-jobs", type=int, default=0,
                        help="HIPACM_MACHINE_JOBS (default: the online CPUs)")
    parser.add_argument("--machines", type=int, default=8)
    parser.add_argument("--fetch-rounds", type=int, default=20)
    parser.add_argument("--kill-after-hits", type=int, default=8,
                        help="g: kill Redis once the reader has had this many entries from it")
    parser.add_argument("--json", help="write the measurements here")
    args = parser.parse_args()
    args.build = str((Path.cwd() / args.build).resolve())
    if shutil.which("redis-server") is None:
        sys.exit("remote_cache_bench.py: needs redis-server")
    with tempfile.TemporaryDirectory(prefix="hipacm-remote-bench-") as scratch:
        try:
            out = run(args, Path(scratch))
        finally:
            for server in SERVERS:
                server.kill()
        print_table(out)
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
