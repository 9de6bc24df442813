# SPDX-License-Identifier: MIT
# test_mpi_warmup.py - `hipacm warmup --mpi` under mpirun -np 3, each rank with its own cache.
import json
import os
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, EXAMPLES, base_env

RANKS = 3
MPIRUN = shutil.which("mpirun")
HELPER = Path(CLI).with_name("hipacm-mpi") if CLI else None

needs_mpi = pytest.mark.skipif(
    MPIRUN is None or HELPER is None or not HELPER.exists(),
    reason="needs mpirun and a build with hipacm-mpi (HIPACM_WITH_MPI)")


def mpi_env(tmp_path, extra=None):
    env = base_env(tmp_path / "unused-cache")
    env.pop("HIPACM_CACHE_DIR", None)
    # CI runs as root; three ranks on two cores.
    env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                "OMPI_MCA_rmaps_base_oversubscribe": "1"})
    env.update(extra or {})
    return env


def mpirun(tmp_path, *args, env=None, timeout=600):
    command = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS), CLI,
               "warmup", "--mpi", *map(str, args)]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                               env=mpi_env(tmp_path, env), check=False)
    return completed


def gather_to_root(tmp_path, kernels, env=None):
    """Warms `kernels` with one job a rank, each in cache-<rank>, gathering them into rank 0's
    export file, which must succeed: (the export file, the job's report)."""
    export = tmp_path / "job.hipacm"
    report = tmp_path / "report.json"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "cache-%r", "--gather-to-root", export, "--json", report, "-q",
                  env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return export, report_of(report)


def kernels_dir(tmp_path, count=6):
    """`count` distinct small kernels: the examples' own, each a file of its own."""
    out = tmp_path / "kernels"
    out.mkdir()
    sources = sorted(p for p in EXAMPLES.glob("*.hip")
                     if "#include" not in p.read_text())[:count]
    assert len(sources) == count
    for source in sources:
        shutil.copy(source, out / source.name)
    return out


def cache_keys(cache):
    db = cache / "kernels.sqlite3"
    if not db.exists():
        return set()
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {row[0] for row in conn.execute("SELECT key FROM entries")}


def report_of(path):
    return json.loads(Path(path).read_text())


@needs_mpi
def test_every_rank_cache_gets_every_kernel_compiled_once(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path)
    report = tmp_path / "report.json"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "cache-%r", "--json", report)
    assert done.returncode == 0, done.stdout + done.stderr
    data = report_of(report)
    assert data["totals"]["kernels"] == 6
    assert data["totals"]["compiled"] == 6
    assert data["totals"]["failed"] == 0
    rows = data["mpi"]["per_rank"]
    assert [row["rank"] for row in rows] == [0, 1, 2]
    assert sum(row["compiled"] for row in rows) == 6
    assert all(row["compiled"] >= 1 for row in rows), rows
    assert all(row["received"] == 6 - row["compiled"] for row in rows), rows
    assert all(row["missing_after"] == 0 for row in rows)
    assert data["mpi"]["incomplete_ranks"] == []
    assert data["mpi"]["bytes_exchanged"] == sum(row["bytes_received"] for row in rows)
    # Each compiled kernel goes to the two other ranks: one message per rank that lacks some.
    assert sum(row["sent"] for row in rows) == 12
    keys = [cache_keys(tmp_path / f"cache-{r}") for r in range(RANKS)]
    assert len(keys[0]) == 6 and keys[0] == keys[1] == keys[2]
    # Only rank 0 prints the job's table.
    assert done.stdout.count("compiled") >= 1
    assert "3 ranks;" in done.stdout


@needs_mpi
def test_cached_kernels_are_neither_compiled_nor_sent_again(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path)
    first = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                   tmp_path / "cache-%r", "-q")
    assert first.returncode == 0, first.stderr
    # Rank 2's node lost its cache: it gets every kernel, from the others' caches.
    shutil.rmtree(tmp_path / "cache-2")
    report = tmp_path / "again.json"
    again = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                   tmp_path / "cache-%r", "--json", report, "-q")
    assert again.returncode == 0, again.stderr
    data = report_of(report)
    assert data["totals"]["compiled"] == 0
    assert data["totals"]["cache_hits"] == 6
    rows = data["mpi"]["per_rank"]
    assert rows[2]["received"] == 6 and rows[2]["served_from_cache"] == 0
    assert rows[0]["received"] == 0 and rows[1]["received"] == 0
    assert sum(row["sent"] for row in rows) == 6
    assert len(cache_keys(tmp_path / "cache-2")) == 6
    # Every cache complete: nothing moves at all.
    report = tmp_path / "third.json"
    third = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--cache-dir", tmp_path / "cache-%r",
                   "--json", report, "-q")
    assert third.returncode == 0, third.stderr
    data = report_of(report)
    assert data["totals"]["compiled"] == 0
    assert data["mpi"]["bytes_exchanged"] == 0
    assert all(row["sent"] == 0 and row["received"] == 0 for row in data["mpi"]["per_rank"])


@needs_mpi
def test_gather_to_root_writes_an_export_file_that_imports(tmp_path, backend_usable, run):
    kernels = kernels_dir(tmp_path)
    export, data = gather_to_root(tmp_path, kernels)
    assert data["totals"]["compiled"] == 6
    rows = data["mpi"]["per_rank"]
    # Only rank 0 receives; the others' caches keep what they compiled.
    assert rows[1]["received"] == 0 and rows[2]["received"] == 0
    assert rows[1]["messages_sent"] <= 1 and rows[2]["messages_sent"] <= 1
    assert len(cache_keys(tmp_path / "cache-1")) == rows[1]["compiled"]
    imported = run("cache", "import", export, "--db", tmp_path / "fresh", "--json")
    assert imported.rc == 0, imported.err
    result = imported.json()
    assert result["accepted"] == 6 and result["rejected"] == []
    # The file is never overwritten.
    again = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--cache-dir", tmp_path / "cache-%r",
                   "--gather-to-root", export, "-q")
    assert again.returncode != 0
    assert "already exists" in again.stderr


@needs_mpi
def test_a_small_round_size_splits_the_exchange_and_loses_nothing(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path)
    reports = {}
    for name, round_bytes in (("one", None), ("many", "4K")):
        report = tmp_path / f"{name}.json"
        env = {"HIPACM_MPI_ROUND_BYTES": round_bytes} if round_bytes else {}
        done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                      tmp_path / f"{name}-%r", "--json", report, "-q", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        reports[name] = report_of(report)["mpi"]
        keys = [cache_keys(tmp_path / f"{name}-{r}") for r in range(RANKS)]
        assert len(keys[0]) == 6 and keys[0] == keys[1] == keys[2]
    one, many = reports["one"], reports["many"]
    assert one["exchange_rounds"] == 1
    # 4 KiB a round is about 1.4 KiB for each other rank: one entry per message, so a rank that
    # compiled k kernels needs k rounds, and every rank compiled at least one.
    assert many["exchange_rounds"] >= 2, many
    assert many["messages_exchanged"] > one["messages_exchanged"]
    assert sum(r["sent"] for r in many["per_rank"]) == 12
    assert sum(r["received"] for r in many["per_rank"]) == 12
    assert all(r["received_rejected"] == 0 for r in many["per_rank"])


@needs_mpi
def test_gathering_to_root_in_small_rounds_exports_every_kernel(tmp_path, backend_usable, run):
    kernels = kernels_dir(tmp_path)
    export, report = gather_to_root(tmp_path, kernels, env={"HIPACM_MPI_ROUND_BYTES": "4K"})
    data = report["mpi"]
    assert data["exchange_rounds"] >= 2, data
    rows = data["per_rank"]
    # Rank 0's export takes the others' kernels and its own.
    assert rows[0]["received"] == 6 and rows[1]["received"] == rows[2]["received"] == 0
    imported = run("cache", "import", export, "--db", tmp_path / "fresh", "--json")
    assert imported.rc == 0, imported.err
    assert imported.json()["accepted"] == 6


@needs_mpi
def test_a_bad_round_size_is_refused_before_anything_compiles(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path, count=2)
    for bad in ("1K", "lots", "3G"):
        done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--cache-dir", tmp_path / "cache-%r",
                      "-q", env={"HIPACM_MPI_ROUND_BYTES": bad})
        assert done.returncode == 2, done.stdout + done.stderr
        assert "HIPACM_MPI_ROUND_BYTES" in done.stderr and bad in done.stderr
        assert all(not cache_keys(tmp_path / f"cache-{r}") for r in range(RANKS))


@needs_mpi
def test_a_failing_kernel_is_reported_once_with_its_log(tmp_path, backend_usable, broken_kernel):
    kernels = kernels_dir(tmp_path, count=4)
    shutil.copy(broken_kernel, kernels / "broken.hip")
    report = tmp_path / "report.json"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "cache-%r", "--json", report, "-q")
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert out.count("broken.hip [gfx90a]: HIPACM_ERROR_COMPILATION") == 1, out
    assert "undefined_name" in out
    data = report_of(report)
    assert data["totals"]["failed"] == 1 and data["totals"]["compiled"] == 4
    failed = [k for k in data["kernels"] if k["status"] == "failed"]
    assert len(failed) == 1 and "undefined_name" in failed[0]["log"]
    assert data["mpi"]["incomplete_ranks"] == []
    for r in range(RANKS):
        assert len(cache_keys(tmp_path / f"cache-{r}")) == 4
    # --keep-going: the same job exits 0.
    kept = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--cache-dir", tmp_path / "cache-%r",
                  "--keep-going", "-q")
    assert kept.returncode == 0, kept.stderr
    assert (kept.stdout + kept.stderr).count("broken.hip [gfx90a]: HIPACM_ERROR_COMPILATION") == 1


@needs_mpi
def test_a_rank_that_dies_fails_the_job_naming_it(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path)
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "cache-%r", "-q",
                  env={"HIPACM_MPI_TEST_DIE_RANK": "1", "HIPACM_TEST_HOOKS": "1"})
    assert done.returncode != 0
    assert "rank 1 of 3 stopped without finishing" in done.stderr, done.stderr
    # Whatever each cache holds is whole: every entry passes verification.
    for r in range(RANKS):
        cache = tmp_path / f"cache-{r}"
        if not (cache / "kernels.sqlite3").exists():
            continue
        verify = subprocess.run([CLI, "cache", "verify", "--db", str(cache), "--json"],
                                capture_output=True, text=True, env=mpi_env(tmp_path),
                                check=False)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert json.loads(verify.stdout)["bad"] == []


@needs_mpi
def test_the_rank_death_hook_alone_stops_nothing(tmp_path, backend_usable):
    # Without the test hooks' switch (HIPACM_TEST_HOOKS), a stray HIPACM_MPI_TEST_DIE_RANK is ignored.
    kernels = kernels_dir(tmp_path)
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "cache-%r", "-q", env={"HIPACM_MPI_TEST_DIE_RANK": "1"})
    assert done.returncode == 0, done.stderr
    for r in range(RANKS):
        assert len(cache_keys(tmp_path / f"cache-{r}")) == 6


@needs_mpi
def test_ranks_given_different_kernels_refuse_the_job(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path, count=2)
    # HIPACM_CACHE_DIR's %r gives each rank its own cache, as --cache-dir's does.
    script = tmp_path / "differ.sh"
    script.write_text('#!/bin/sh\nif [ "$OMPI_COMM_WORLD_RANK" = 2 ]; then\n'
                      f'  exec "{CLI}" warmup --mpi "{kernels}" --arch gfx90a -D EXTRA=1 -q\n'
                      f'fi\nexec "{CLI}" warmup --mpi "{kernels}" --arch gfx90a -q\n')
    script.chmod(0o755)
    done = subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "3",
                           str(script)], capture_output=True, text=True, timeout=600,
                          env=mpi_env(tmp_path, {"HIPACM_CACHE_DIR": str(tmp_path / "c%r")}),
                          check=False)
    assert done.returncode != 0
    assert "was given other kernels" in done.stderr, done.stderr


def test_without_mpi_support_the_option_is_a_usage_error(tmp_path, cli_path):
    # The plain tool alone, without hipacm-mpi beside it, as a build without Open MPI has it.
    lone = tmp_path / "bin" / "hipacm"
    lone.parent.mkdir()
    shutil.copy(cli_path, lone)
    done = subprocess.run([str(lone), "warmup", "--mpi", str(EXAMPLES), "--arch", "gfx90a"],
                          capture_output=True, text=True, env=base_env(tmp_path / "c"),
                          check=False)
    assert done.returncode == 2
    assert "--mpi needs hipacm-mpi" in done.stderr


def test_mpi_only_options_need_mpi(run):
    done = run("warmup", EXAMPLES, "--arch", "gfx90a", "--gather-to-root", "x.db")
    assert done.rc == 2
    assert "add --mpi" in done.err


@needs_mpi
def test_a_rank_bound_to_fewer_cpus_than_its_workers_is_warned_about(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path, count=1)

    def run(binding, cache):
        command = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "--bind-to", binding,
                   "-np", "1", CLI, "warmup", "--mpi", str(kernels), "--arch", "gfx90a",
                   "--jobs", "2", "--cache-dir", str(tmp_path / cache), "--quiet"]
        return subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env=mpi_env(tmp_path), check=False)

    bound = run("core", "bound-%r")
    assert bound.returncode == 0, bound.stdout + bound.stderr
    assert "rank 0 may run on 1 CPU only" in bound.stderr
    assert "mpirun --bind-to none" in bound.stderr
    free = run("none", "free-%r")
    assert free.returncode == 0, free.stdout + free.stderr
    if len(os.sched_getaffinity(0)) >= 2:
        assert "may run on" not in free.stderr


@needs_mpi
def test_costs_come_from_an_earlier_report_and_a_bad_costs_file_is_refused(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path, count=3)
    first = tmp_path / "first.json"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "a-%r", "--json", first)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report_of(first)["mpi"]["cost_basis"] == "source bytes"

    second = tmp_path / "second.json"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "b-%r", "--costs", first, "--json", second)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report_of(second)["mpi"]["cost_basis"] == "report seconds"
    assert report_of(second)["totals"]["compiled"] == 3

    # A directory, or a FIFO that nothing writes to, is refused at once instead of hanging.
    fifo = tmp_path / "costs.fifo"
    os.mkfifo(fifo)
    for bad in (tmp_path, fifo):
        done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                      tmp_path / "c-%r", "--costs", bad, timeout=120)
        assert done.returncode != 0
        assert "--costs" in done.stderr or str(bad) in done.stderr, done.stderr

    # A report nested 100,000 levels deep is refused while it is parsed, not walked.
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "d-%r", "--costs", deep, timeout=120)
    assert done.returncode != 0
    assert "nested deeper than 64 levels" in done.stderr, done.stderr


def cache_keys_of_file(path):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return {row[0] for row in conn.execute("SELECT key FROM entries")}


def pids_from_now(count):
    """The next `count` pids the kernel will hand out (wrapping as it does)."""
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    return [p if p < pid_max else 300 + (p - pid_max) for p in range(last + 1, last + 1 + count)]


@needs_mpi
def test_trust2_02_planted_staging_directories_never_reach_the_export(tmp_path, backend_usable,
                                                                      run):
    kernels = kernels_dir(tmp_path, count=3)
    # Another user's valid cache, holding a kernel the job never asked for.
    extra = sorted(p for p in EXAMPLES.glob("*.hip") if "#include" not in p.read_text())[3]
    poison = tmp_path / "poison"
    assert run("warmup", extra, "--arch", "gfx90a", "--cache-dir", poison).rc == 0
    poison_keys = cache_keys(poison)
    assert len(poison_keys) == 1
    # One self-contained file of it (no -wal beside it), as an attacker would copy around.
    template = tmp_path / "planted.sqlite3"
    with sqlite3.connect(poison / "kernels.sqlite3") as source, sqlite3.connect(template) as copy:
        source.backup(copy)
    with sqlite3.connect(template) as copy:
        copy.execute("PRAGMA journal_mode=DELETE")
    assert cache_keys_of_file(template) == poison_keys
    # The attacker plants the staging directory of every pid the job may get: 3,000 of them,
    # each theirs (uid 65534), open to anyone, with that database in it.
    shared = tmp_path / "shared"
    shared.mkdir()
    export = shared / "job.hipacm"
    planted = []
    for pid in pids_from_now(3000):
        parts = shared / f".{export.name}.parts-{pid}"
        parts.mkdir()
        shutil.copyfile(template, parts / "kernels.sqlite3")
        for path in (parts, parts / "kernels.sqlite3"):
            os.chown(path, 65534, 65534)
        parts.chmod(0o777)
        (parts / "kernels.sqlite3").chmod(0o666)
        planted.append(parts)
    report = tmp_path / "report.json"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                  tmp_path / "cache-%r", "--gather-to-root", export, "--json", report)
    assert done.returncode == 0, done.stdout + done.stderr
    # Each rank's cache keeps what it compiled: together, the job's entries.
    job_keys = set().union(*(cache_keys(tmp_path / f"cache-{r}") for r in range(RANKS)))
    assert len(job_keys) == 3
    # The export holds the job's entries and nothing else, and the report says what it holds.
    held = cache_keys_of_file(export)
    assert held == job_keys and not held & poison_keys
    assert f"wrote {len(held)} code objects to {export}" in done.stdout
    assert report_of(report)["mpi"]["gathered"] == len(held)
    # Every planted directory is as it was (never used, never removed), and the job's own
    # staging directory is gone.
    assert all(cache_keys(parts) == poison_keys for parts in planted)
    left = {p for p in shared.iterdir() if p.name.startswith(f".{export.name}.parts-")}
    assert left == set(planted)


@needs_mpi
def test_trust2_02_gather_to_root_never_creates_a_missing_directory(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path, count=1)
    export = tmp_path / "no-such-dir" / "deeper" / "job.hipacm"
    done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--cache-dir", tmp_path / "cache-%r",
                  "--gather-to-root", export, "-q")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not an existing directory" in done.stderr
    assert not (tmp_path / "no-such-dir").exists()


def service_processes(runtime_dir):
    """Pids of compile services (hipacm-worker --service SOCKET) with their socket in
    runtime_dir."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--service" in args and any(a.startswith(str(runtime_dir).encode()) for a in args):
            found.append(int(entry.name))
    return found


@needs_mpi
def test_trust2_10_mpi_ranks_leave_no_compile_service_behind(tmp_path, backend_usable):
    kernels = kernels_dir(tmp_path, count=3)
    runtime = tmp_path / "run"

    def job(name, setting, *more):
        env = mpi_env(tmp_path, {"HIPACM_RUNTIME_DIR": str(runtime)})
        env.pop("HIPACM_COMPILE_SERVICE", None)
        env.pop("HIPACM_ISOLATION", None)  # and its service= part: the default is unset
        if setting:
            env["HIPACM_ISOLATION"] = f"service={setting}"
        command = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS), CLI,
                   "warmup", "--mpi", str(kernels), "--arch", "gfx90a", "--jobs", "1",
                   "--cache-dir", str(tmp_path / f"{name}-%r"), "-q", *more]
        return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env,
                              check=False)

    try:
        # The default (no service= part) and an explicit service=auto: ranks spawn their own.
        for name, setting in (("unset", None), ("auto", "auto")):
            done = job(name, setting)
            assert done.returncode == 0, done.stdout + done.stderr
            assert all(len(cache_keys(tmp_path / f"{name}-{r}")) == 3 for r in range(RANKS))
            assert service_processes(runtime) == [], f"HIPACM_ISOLATION=service={setting}"
        # Asked for explicitly, the service is used (and this count would see it), one per rank,
        # each kept by --keep-services.
        done = job("on", "on", "--keep-services")
        assert done.returncode == 0, done.stdout + done.stderr
        # Its processes count the services and the workers they forked (which keep the
        # service's command line): each rank's socket is the count of services.
        assert len(service_processes(runtime)) >= RANKS
        assert len(list(runtime.glob("compile-service-*.sock"))) == RANKS
    finally:
        for pid in service_processes(runtime):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def runtime_processes(runtime_dir):
    """Pids of every process whose command line names a path in runtime_dir: the compile services
    started there and the workers they forked (a forked worker keeps its service's command
    line)."""
    found = []
    prefix = str(runtime_dir).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a.startswith(prefix) for a in args):
            found.append(int(entry.name))
    return found


@needs_mpi
def test_each_rank_stops_the_compile_service_its_run_started(tmp_path, backend_usable):
    """With service=on each rank orders its workers from a service of its own (the service is
    keyed by the rank's environment); at the end of the run the rank stops it, so that nothing
    waits on the node for HIPACM_IDLE_MS. A service that was running before is left alone."""
    kernels = kernels_dir(tmp_path, count=3)
    runtime = tmp_path / "run"
    env = {"HIPACM_ISOLATION": "service=on", "HIPACM_RUNTIME_DIR": str(runtime)}
    try:
        done = mpirun(tmp_path, kernels, "--arch", "gfx90a", "--jobs", "1", "--cache-dir",
                      tmp_path / "cache-%r", "-q", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert all(len(cache_keys(tmp_path / f"cache-{r}")) == 3 for r in range(RANKS))
        # The workers the ranks held exit on EOF once their rank has: a bounded wait for that.
        for _ in range(100):
            if not runtime_processes(runtime):
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert runtime_processes(runtime) == []
        assert list(runtime.glob("compile-service-*")) == []
        assert "could not stop" not in done.stderr
    finally:
        for pid in service_processes(runtime):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def test_keep_services_needs_mpi(run):
    done = run("warmup", EXAMPLES, "--arch", "gfx90a", "--keep-services")
    assert done.rc == 2
    assert "add --mpi" in done.err


SBATCH = Path(__file__).resolve().parents[2] / "examples" / "slurm" / "warmup.sbatch"


def test_the_sbatch_example_is_valid_bash():
    done = subprocess.run(["bash", "-n", str(SBATCH)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    text = SBATCH.read_text()
    assert "#SBATCH --ntasks-per-node=1" in text and "warmup --mpi" in text


@needs_mpi
def test_the_sbatch_example_warms_every_rank_then_plans_by_its_report(tmp_path, backend_usable):
    """The example job script, run as it is with an srun that stands in for Slurm's (two MPI
    ranks on this machine): a first run compiles into both caches and keeps its report as the
    next run's costs; a second run uses them; a third gathers into an export file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    # srun's own options (the script gives them as --name=value) are dropped; mpirun starts the
    # command as two ranks.
    srun.write_text("#!/bin/bash\n"
                    "while [ $# -gt 0 ] && [[ $1 == -* ]]; do shift; done\n"
                    f"exec {MPIRUN} --allow-run-as-root --oversubscribe -np 2 \"$@\"\n")
    srun.chmod(0o755)
    kernels = kernels_dir(tmp_path, count=2)
    env = mpi_env(tmp_path, {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HIPACM": CLI,
                             "ARCHS": "gfx90a", "CACHE_DIR": str(tmp_path / "cache-%r"),
                             "SLURM_CPUS_ON_NODE": "1"})
    for name in ("GATHER_TO", "COSTS", "REPORT", "KERNELS", "SLURM_JOB_ID"):
        env.pop(name, None)
    work = tmp_path / "job"
    work.mkdir()

    def job(extra=None):
        done = subprocess.run(["bash", str(SBATCH), str(kernels)], cwd=work,
                              env=dict(env, **(extra or {})), capture_output=True, text=True,
                              timeout=600, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        return report_of(work / "hipacm-warmup-local.json")

    first = job()
    assert first["mpi"]["ranks"] == 2 and first["totals"]["compiled"] == 2
    assert first["mpi"]["cost_basis"] == "source bytes"
    assert all(len(cache_keys(tmp_path / f"cache-{r}")) == 2 for r in range(2))
    assert (work / "hipacm-warmup-costs.json").exists()
    (work / "hipacm-warmup-local.json").unlink()
    second = job()
    assert second["mpi"]["cost_basis"] == "report seconds"
    assert second["totals"]["compiled"] == 0 and second["totals"]["cache_hits"] == 2
    (work / "hipacm-warmup-local.json").unlink()
    export = tmp_path / "all.hipacm"
    third = job({"GATHER_TO": str(export)})
    assert third["mpi"]["gathered"] == 2 and export.exists()
