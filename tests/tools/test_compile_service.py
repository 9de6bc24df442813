# SPDX-License-Identifier: MIT
"""The compile service through the hipacm tool: short `hipacm warmup` runs share one service,
the second gets the first one's warm workers, doctor shows it, and SIGTERM ends it cleanly."""
import json
import os
import re
import signal
import time

import pytest

from conftest import EXAMPLES


def checks_by_name(doc):
    return {c["name"]: c for c in doc["checks"]}


def worker_pids(stderr):
    return set(int(p) for p in re.findall(r"started hipacm-worker \(pid (\d+)\)", stderr))


def back_in_service(pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            fd3 = os.readlink(f"/proc/{pid}/fd/3")
            with open(f"/proc/{pid}/stat") as stat:
                state = stat.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if fd3 == "/dev/null" and state == "S":
            return True
        time.sleep(0.02)
    return False


def gone(pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


# None: the variables unset, as for a user who never heard of them (the default, auto). The
# deprecated HIPACM_COMPILE_SERVICE is unset too: where set, it would win over service=.
@pytest.fixture(params=["service=on", None], ids=["on", "default"])
def service_env(request, tmp_path):
    return {"HIPACM_COMPILE_SERVICE": None, "HIPACM_ISOLATION": request.param,
            "HIPACM_RUNTIME_DIR": str(tmp_path / "run"),
            "HIPACM_CACHE": "off", "HIPACM_IDLE_MS": ",60000"}


def test_doctor_says_the_service_is_used_by_default(run, tmp_path):
    env = {"HIPACM_COMPILE_SERVICE": None, "HIPACM_ISOLATION": None,
           "HIPACM_RUNTIME_DIR": str(tmp_path / "run")}
    details = checks_by_name(run("doctor", "--json", env=env).json())["worker"]["details"]
    assert details["compile_service"] == "auto"
    assert details["compile_service_used"] is True
    if details["found"]:
        assert details["compile_service_socket"].startswith(env["HIPACM_RUNTIME_DIR"] + "/")


def test_doctor_says_off_turns_the_service_off(run, tmp_path):
    env = {"HIPACM_ISOLATION": "service=off", "HIPACM_RUNTIME_DIR": str(tmp_path / "run")}
    worker = checks_by_name(run("doctor", "--json", env=env).json())["worker"]
    assert worker["details"]["compile_service"] == "off"
    assert worker["details"]["compile_service_used"] is False
    assert "compile_service_socket" not in worker["details"]
    assert "compile_service_problem" not in worker["details"]


# Through the deprecated name on purpose: its problem names it, and the CLI still reads it.
def test_an_unknown_setting_reads_as_off_and_says_so(run, backend_usable, tmp_path):
    env = {"HIPACM_COMPILE_SERVICE": "yes", "HIPACM_RUNTIME_DIR": str(tmp_path / "run"),
           "HIPACM_LOG": "warning"}
    worker = checks_by_name(run("doctor", "--json", env=env).json())["worker"]
    assert worker["details"]["compile_service"] == "off"
    assert worker["details"]["compile_service_used"] is False
    assert "HIPACM_COMPILE_SERVICE='yes'" in worker["details"]["compile_service_problem"]
    assert worker["level"] == "warning"
    r = run("warmup", "--arch", "gfx90a", "--jobs", "2", EXAMPLES / "saxpy.hip", env=env)
    assert r.rc == 0, r.err
    assert r.err.count("HIPACM_COMPILE_SERVICE='yes' is not auto, on or off; read as off") == 1
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").glob("*.sock"))


def test_warmups_share_one_service_and_its_warm_workers(run, backend_usable, service_env, tmp_path):
    doctor = checks_by_name(run("doctor", "--json", env=service_env).json())["worker"]
    if not doctor["details"]["found"]:
        pytest.skip("no hipacm-worker beside the tool")
    socket = doctor["details"]["compile_service_socket"]
    assert socket.startswith(service_env["HIPACM_RUNTIME_DIR"] + "/compile-service-")
    assert doctor["details"]["compile_service_pid"] is None
    assert "compile service starts on the first compile" in doctor["summary"]

    env = dict(service_env, HIPACM_LOG="info")
    args = ("warmup", "--arch", "gfx90a", "--jobs", "2", "--json", tmp_path / "r.json", EXAMPLES)
    first = run(*args, env=env)
    assert first.rc == 0, first.err
    first_report = json.loads((tmp_path / "r.json").read_text())
    service = checks_by_name(run("doctor", "--json", env=service_env).json())["worker"]
    pid = service["details"]["compile_service_pid"]
    assert isinstance(pid, int) and pid > 0
    assert f"compile service running (pid {pid})" in service["summary"]
    try:
        # The first run's workers are back with the service: waiting on its line, not on a host.
        for worker in worker_pids(first.err):
            assert back_in_service(worker), f"worker {worker} did not go back to the service"
        second = run(*args, env=env)
        assert second.rc == 0, second.err
        second_report = json.loads((tmp_path / "r.json").read_text())
        assert second_report["totals"]["compiled"] == first_report["totals"]["compiled"] > 0
        assert second_report["totals"]["failed"] == 0
        # The second run was served by workers the first one gave back.
        assert worker_pids(second.err)
        assert worker_pids(second.err) <= worker_pids(first.err)
        after = checks_by_name(run("doctor", "--json", env=service_env).json())["worker"]
        assert after["details"]["compile_service_pid"] == pid
    finally:
        os.kill(pid, signal.SIGTERM)
    assert gone(pid)
    assert not os.path.exists(socket)


def test_a_service_that_cannot_start_leaves_compiles_to_spawned_workers(run, backend_usable,
                                                                         service_env, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    env = dict(service_env, HIPACM_RUNTIME_DIR=str(blocker), HIPACM_LOG="warning")
    r = run("warmup", "--arch", "gfx90a", "--jobs", "2", EXAMPLES, env=env)
    assert r.rc == 0, r.err
    if service_env["HIPACM_ISOLATION"] == "service=on":
        # Asked for by name: a warning.
        assert "the compile service cannot be used" in r.err
        assert "not a directory" in r.err
    else:
        # By default: only a note, which a warning-level log leaves out ...
        assert "compile service" not in r.err
        r = run("warmup", "--arch", "gfx90a", "--jobs", "2", EXAMPLES / "saxpy.hip",
                env=dict(env, HIPACM_LOG="info"))
        assert r.rc == 0, r.err
        # ... and an info-level one shows, once.
        assert r.err.count("the compile service cannot be used") == 1
        assert "not a directory" in r.err


def test_a_pch_that_a_hosts_last_compile_started_is_finished_after_it_leaves(run, backend_usable,
                                                                             tmp_path):
    # A one-kernel warmup exits as soon as its compile is back, while the worker has only begun
    # the runtime-header PCH for the kernel's options: the service's worker finishes it for the
    # processes after it instead of killing it with the session (which left the options of
    # whatever a program compiles last without a PCH for good).
    runtime = tmp_path / "run"
    env = {"HIPACM_COMPILE_SERVICE": None, "HIPACM_ISOLATION": "service=on",
           "HIPACM_RUNTIME_DIR": str(runtime), "HIPACM_CACHE": "off",
           "HIPACM_IDLE_MS": ",60000", "HIPACM_HIPRTC_PCH": None}
    checks = checks_by_name(run("doctor", "--json", env=env).json())
    if not checks["worker"]["details"]["found"]:
        pytest.skip("no hipacm-worker beside the tool")
    # Workers use the PCH with ROCm 5's hipRTC only (WORKERS.md): elsewhere no key is claimed.
    hiprtc = checks.get("hiprtc", {}).get("details", {}).get("path") or ""
    if not os.path.basename(os.path.realpath(hiprtc)).startswith("libamdhip64.so.5"):
        pytest.skip(f"no runtime-header PCH with this hipRTC ({hiprtc or 'none found'})")
    r = run("warmup", "--arch", "gfx90a", "--jobs", "1", EXAMPLES / "saxpy.hip", env=env)
    assert r.rc == 0, r.err
    pid = checks_by_name(run("doctor", "--json", env=env).json())["worker"]["details"][
        "compile_service_pid"]
    assert isinstance(pid, int) and pid > 0
    try:
        deadline = time.monotonic() + 60
        while True:
            details = checks_by_name(run("doctor", "--json", env=env).json())["worker"]["details"]
            settled = details["hiprtc_pch_ready"] + details["hiprtc_pch_refused"]
            if settled or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        # Published, or refused with its reason by a hipRTC that cannot use one: settled either way.
        assert settled == 1, f"no PCH was finished for the host's last compile: {r.err}"
    finally:
        os.kill(pid, signal.SIGTERM)
    assert gone(pid)
