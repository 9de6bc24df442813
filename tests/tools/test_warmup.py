# SPDX-License-Identifier: MIT
# test_warmup.py - hipacm warmup: exit codes, the JSON report's schema, progress on a pipe, options.
import contextlib
import json
import os
import signal
import subprocess
import sys

import pytest

import rocm_facts
from conftest import EXAMPLES

KERNEL_KEYS = {"path": str, "arch": str, "key": str, "status": str, "status_code": str,
               "from_cache": bool, "code_size": int, "compile_seconds": float,
               "kernels": list}
TOTAL_KEYS = {"kernels": int, "cache_hits": int, "compiled": int, "failed": int,
              "compile_seconds": float, "wall_seconds": float}


def report(tmp_path, name="report.json"):
    return json.loads((tmp_path / name).read_text())


def test_success_exits_0_with_a_versioned_report(run, backend_usable, tmp_path):
    r = run("warmup", EXAMPLES / "saxpy.hip", EXAMPLES / "scale.hip", "--arch", "gfx90a",
            "--json", tmp_path / "report.json")
    assert r.rc == 0, r.err
    doc = report(tmp_path)
    assert doc["schema"] == "hipacm-warmup-report-2"
    assert doc["archs"] == ["gfx90a"]
    assert isinstance(doc["hipacm_version"], str)
    assert doc["cache"] == "default" and doc["cache_dir"] is None
    for key, kind in TOTAL_KEYS.items():
        assert isinstance(doc["totals"][key], kind), key
    assert "speedup" not in doc["totals"] and doc["serial"] is None
    assert doc["totals"]["kernels"] == 2 and doc["totals"]["failed"] == 0
    assert doc["totals"]["compiled"] + doc["totals"]["cache_hits"] == 2
    assert len(doc["kernels"]) == 2
    for kernel in doc["kernels"]:
        for key, kind in KERNEL_KEYS.items():
            assert isinstance(kernel[key], kind), key
        assert kernel["error"] is None
        assert kernel["status"] == "ok" and kernel["status_code"] == "HIPACM_SUCCESS"
        assert kernel["key"].startswith("sha256:")
        assert kernel["code_size"] > 0
    saxpy, scale = doc["kernels"]
    assert saxpy["path"].endswith("saxpy.hip") and saxpy["kernels"] == ["saxpy"]
    assert scale["kernels"] == ["_Z5scaleIdEvPT_S0_i", "_Z5scaleIfEvPT_S0_i"]
    # The human summary goes to stdout.
    assert "cache hits" in r.out and "total" in r.out


def test_compile_failure_exits_1_and_prints_the_log(run, backend_usable, broken_kernel,
                                                     tmp_path):
    r = run("warmup", broken_kernel, EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--json", "-")
    assert r.rc == 1
    assert "FAILED" in r.err and "broken.hip" in r.err
    assert "undeclared identifier 'undefined_name'" in r.err
    doc = json.loads(r.out)  # with --json -, stdout holds only the report
    broken, saxpy = doc["kernels"]
    assert broken["status"] == "failed"
    assert broken["status_code"] == "HIPACM_ERROR_COMPILATION"
    assert isinstance(broken["error"], str) and broken["error"]
    assert broken["code_size"] == 0 and broken["kernels"] == []
    assert saxpy["status"] == "ok"
    assert doc["totals"]["failed"] == 1
    assert "undeclared identifier 'undefined_name'" in broken["log"]
    assert saxpy["log"] is None
    assert "cache hits" in r.err  # the summary moved to stderr


def test_keep_going_exits_0_despite_failures(run, backend_usable, broken_kernel):
    r = run("warmup", broken_kernel, "--arch", "gfx90a", "--keep-going")
    assert r.rc == 0
    assert "FAILED" in r.err


def test_long_logs_are_trimmed(run, backend_usable, tmp_path):
    path = tmp_path / "many_errors.hip"
    body = "\n".join(f"  x[{i}] = missing_{i};" for i in range(15))
    path.write_text('extern "C" __global__ void k(float* x) {\n' + body + "\n}\n")
    r = run("warmup", path, "--arch", "gfx90a", "--log-lines", "3", "-q")
    assert r.rc == 1
    assert "lines omitted" in r.err
    assert "missing_0" in r.err


@pytest.mark.parametrize("arch", ["gfx9999", "real-unlisted", "sm_1", "gfx90a:bogus+"])
def test_unknown_arch_exits_2_before_compiling(run, backend_usable, arch):
    # A real arch that this comgr does not list would abort hipRTC: gfx940 is one in ROCm 5.2.3
    # (not added yet) and in 6.4 and 7.2 (dropped again).
    doctor = {c["name"]: c for c in run("doctor", "--json").json()["checks"]}
    listed = doctor["comgr"]["details"]["processors"]
    if arch == "real-unlisted":
        unlisted = rocm_facts.unlisted_real_processors(listed)
        if not unlisted:
            pytest.skip("this comgr lists every processor that rocm_facts knows")
        arch = unlisted[0]
    if arch in listed:
        pytest.skip(f"this comgr knows {arch}")
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", f"gfx90a,{arch}")
    if arch.startswith("sm_") and not rocm_facts.nvrtc_loadable():
        # Without NVRTC no sm_ arch can be checked: it is refused as unavailable instead.
        assert r.rc == 3, r.err
        assert f"arch '{arch}' needs NVRTC" in r.err
    else:
        assert r.rc == 2
        assert f"arch '{arch}'" in r.err
    assert "hipacm: warmup" not in r.err  # nothing was compiled


def test_missing_path_exits_2(run, tmp_path):
    r = run("warmup", tmp_path / "nope.hip", "--arch", "gfx90a")
    assert r.rc == 2
    assert "nope.hip: no such file or directory" in r.err


def test_directory_without_kernels_exits_2(run, tmp_path):
    r = run("warmup", tmp_path, "--arch", "gfx90a")
    assert r.rc == 2
    assert "no .hip files" in r.err


@pytest.mark.parametrize("text,message", [
    ("{not json", "not valid JSON"),
    ('{"schema": "other", "kernels": []}', "schema is 'other'"),
    ('{"schema": "hipacm-examples-manifest-1", "kernels": {}}', "'kernels' must be an array"),
    ('{"schema": "hipacm-examples-manifest-1", "kernels": [{"options": []}]}', "'source'"),
    ('{"schema": "hipacm-examples-manifest-1", "kernels": [{"source": "absent.hip"}]}',
     "absent.hip"),
    ('{"schema": "hipacm-examples-manifest-1", "kernels": [{"source": "k.hip", "options": "-O3"}]}',
     "'options' must be an array"),
])
def test_bad_manifest_exits_2(run, tmp_path, text, message):
    (tmp_path / "k.hip").write_text('extern "C" __global__ void k() {}\n')
    manifest = tmp_path / "bad.json"
    manifest.write_text(text)
    r = run("warmup", manifest, "--arch", "gfx90a")
    assert r.rc == 2
    assert message in r.err


def test_bad_directive_exits_2(run, tmp_path):
    path = tmp_path / "k.hip"
    path.write_text('// hipacm: optoin=-O3\nextern "C" __global__ void k() {}\n')
    r = run("warmup", path, "--arch", "gfx90a")
    assert r.rc == 2
    assert "unknown directive key 'optoin'" in r.err


def test_progress_lines_when_stderr_is_a_pipe(run, backend_usable):
    r = run("warmup", EXAMPLES / "saxpy.hip", EXAMPLES / "vector_add.hip", "--arch", "gfx90a",
            "--verbose")
    assert r.rc == 0, r.err
    # --verbose: one line per kernel on stdout, before the summary.
    kernel_lines = [l.split() for l in r.out.splitlines() if l.startswith("compiled ")]
    assert [(l[1], l[-1].rsplit("/", 1)[-1]) for l in kernel_lines] == [
        ("gfx90a", "saxpy.hip"), ("gfx90a", "vector_add.hip")]
    lines = [l for l in r.err.splitlines() if l.startswith("hipacm: warmup ")]
    assert lines[0].startswith("hipacm: warmup 0/2 kernels")
    assert lines[-1].startswith("hipacm: warmup 2/2 kernels")
    assert "ETA done" in lines[-1]
    assert "\r" not in r.err and "\x1b[" not in r.err  # no terminal redraws on a pipe


def test_quiet_prints_no_progress(run, backend_usable, tmp_path):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--quiet", "--no-cache",
            "--json", tmp_path / "r.json")
    assert r.rc == 0, r.err
    assert "hipacm: warmup" not in r.err
    assert report(tmp_path, "r.json")["cache"] == "off"


def test_arch_defaults_to_hipacm_arch(run, backend_usable):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--json", "-", "-q", env={"HIPACM_ARCH": "gfx1030"})
    assert r.rc == 0, r.err
    assert json.loads(r.out)["archs"] == ["gfx1030"]


def test_the_same_file_twice_is_warmed_once(run, backend_usable):
    r = run("warmup", EXAMPLES / "saxpy.hip", EXAMPLES / "saxpy.hip", "--arch", "gfx90a",
            "--json", "-", "-q")
    assert r.rc == 0, r.err
    assert json.loads(r.out)["totals"]["kernels"] == 1


def test_timeout_fails_the_compile(run, backend_usable):
    r = run("warmup", EXAMPLES / "gemm_tiled.hip", "--arch", "gfx90a", "--timeout", "0.001",
            "--jobs", "1", "--json", "-", "-q")
    assert r.rc == 1
    doc = json.loads(r.out)
    assert doc["jobs"] == 1
    (kernel,) = doc["kernels"]
    assert kernel["status_code"] == "HIPACM_ERROR_TIMEOUT"


def test_no_compiler_backend_exits_3(run, tmp_path):
    env = {"HIPACM_HIPRTC_LIBRARY": str(tmp_path / "libmissing.so")}
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", env=env)
    assert r.rc == 3
    assert "hipacm doctor" in r.err


def test_output_dir_holds_one_code_object_per_kernel_and_arch(run, backend_usable, tmp_path):
    out = tmp_path / "objects"
    r = run("warmup", EXAMPLES / "saxpy.hip", EXAMPLES / "histogram.hip",
            "--arch", "gfx90a,gfx1030", "-o", out, "-q")
    assert r.rc == 0, r.err
    assert sorted(os.listdir(out)) == ["histogram.gfx1030.co", "histogram.gfx90a.co",
                                       "saxpy.gfx1030.co", "saxpy.gfx90a.co"]
    assert (out / "saxpy.gfx90a.co").read_bytes()[:4] == b"\x7fELF"


def test_progress_bar_when_stderr_is_a_terminal(cli_path, backend_usable, cache_dir):
    from conftest import base_env, run_with_stderr_on_a_terminal

    rc, err = run_with_stderr_on_a_terminal(
        [cli_path, "warmup", str(EXAMPLES / "saxpy.hip"), "--arch", "gfx90a"], base_env(cache_dir))
    assert rc == 0
    assert "\r[" in err and "] 1/1 kernels" in err and "ETA done" in err
    assert "hipacm: warmup" not in err  # the plain lines are for pipes


# --- issue 27, item 6: a stopped or busy holder of the machine-wide budget -------------------

# Takes byte 0 of the slot file (slot 0) as an open-file-description lock and writes its pid
# where holders do (past the lock bytes), as a hipacm process holding the only slot does; then
# stops itself, as Ctrl-Z stops a host, or sleeps, as a long compile keeps a slot.
HOLDER = """\
import fcntl, os, signal, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hh4xqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0))
os.pwrite(fd, struct.pack("=i", os.getpid()), 65536)
print("held", flush=True)
if sys.argv[2] == "stop":
    os.kill(os.getpid(), signal.SIGSTOP)
while True:
    time.sleep(60)
"""


@contextlib.contextmanager
def _holding_the_only_slot(run, tmp_path, how):
    """For the block, a process that holds the only slot of a budget in a fresh runtime directory
    and then stops or sleeps (`how`): (the environment that uses that budget, the process)."""
    runtime = tmp_path / "run"
    env = {"HIPACM_RUNTIME_DIR": str(runtime), "HIPACM_MACHINE_JOBS": "1",
           "HIPACM_ISOLATION": "service=off", "HIPACM_LOG": "info"}
    assert run("doctor", env=env).rc in (0, 1)  # makes the runtime directory and slot file
    slots = runtime / "worker-slots"
    assert slots.is_file()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(slots), how],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield env, holder
    finally:
        holder.send_signal(signal.SIGCONT)
        holder.kill()
        holder.wait()


def _warm_saxpy(run, env, timeout, rc):
    """Warms saxpy uncached with `--timeout timeout`, which must exit with `rc`: (the run, the
    status code of each kernel its JSON report lists)."""
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--no-cache",
            "--timeout", timeout, "--json", "-", env=env, timeout=120)
    assert r.rc == rc, (r.rc, r.err)
    doc = json.loads(r.out)
    return r, [k["status_code"] for k in doc["kernels"]]


def test_trust2_06_warmup_timeout_covers_the_wait_for_a_busy_budget_holder(run, backend_usable,
                                                                          tmp_path):
    with _holding_the_only_slot(run, tmp_path, "sleep") as (env, holder):
        # Generous: only a stall (the holder keeps its slot for ever) misses it.
        r, statuses = _warm_saxpy(run, env, timeout="5", rc=1)
        assert statuses == ["HIPACM_ERROR_TIMEOUT"]
        assert "waiting for a machine-wide compile slot" in r.err, r.err
        assert f"pid {holder.pid}" in r.err, r.err


def test_trust2_06_a_stopped_budget_holder_is_not_waited_for(run, backend_usable, tmp_path):
    with _holding_the_only_slot(run, tmp_path, "stop") as (env, holder):
        # No --timeout: before, this waited for ever; a stopped holder now costs no wait.
        r, statuses = _warm_saxpy(run, env, timeout="0", rc=0)
        assert statuses == ["HIPACM_SUCCESS"]
        assert "held by a stopped process" in r.err, r.err
        assert f"pid {holder.pid} (stopped)" in r.err, r.err
