# SPDX-License-Identifier: MIT
# test_doctor.py - hipacm doctor: checks, hints, exit status, JSON schema.
import hashlib
import json
import os
import shutil
import subprocess
import tempfile

import pytest

import rocm_facts
from conftest import EXAMPLES

NAMES = ["plugin", "hiprtc", "comgr", "worker", "cache", "arch", "devices", "intercept"]
LEVELS = {"ok", "info", "warning", "error"}


def checks_by_name(doc):
    return {check["name"]: check for check in doc["checks"]}


def test_doctor_json_schema(run, backend_usable):
    r = run("doctor", "--json", env={"HIPACM_ARCH": "gfx90a"})
    assert r.rc == 0, r.out
    doc = r.json()
    assert doc["schema"] == "hipacm-doctor-1"
    assert doc["usable"] is True
    assert [c["name"] for c in doc["checks"]] == NAMES
    for check in doc["checks"]:
        assert check["level"] in LEVELS
        assert isinstance(check["summary"], str) and check["summary"]
        assert check["hint"] is None or isinstance(check["hint"], str)
        assert isinstance(check["details"], dict)
    checks = checks_by_name(doc)
    assert checks["hiprtc"]["details"]["found"] is True
    assert checks["hiprtc"]["details"]["path"]
    assert "gfx90a" in checks["comgr"]["details"]["processors"]
    assert checks["worker"]["details"]["path"].endswith("hipacm-worker")
    assert checks["arch"]["level"] == "ok"
    assert checks["arch"]["details"]["default_arch"] == "gfx90a"
    assert isinstance(checks["devices"]["details"]["devices"], list)


def test_doctor_text_reports_each_check(run, backend_usable):
    r = run("doctor", env={"HIPACM_ARCH": "gfx1030"})
    assert r.rc == 0, r.out
    for name in NAMES:
        assert f"] {name}" in r.out
    assert "default arch gfx1030 (from HIPACM_ARCH)" in r.out
    assert "hipacm is usable here." in r.out


def test_doctor_cache_location_follows_the_resolution_order(run, tmp_path):
    env = {"HIPACM_CACHE_DIR": "", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    cache = checks_by_name(run("doctor", "--json", env=env).json())["cache"]
    assert cache["details"]["path"] == str(tmp_path / "xdg" / "hipacm")
    assert cache["details"]["source"] == "XDG_CACHE_HOME"
    env = {"HIPACM_CACHE_DIR": "", "XDG_CACHE_HOME": "", "HOME": str(tmp_path)}
    cache = checks_by_name(run("doctor", "--json", env=env).json())["cache"]
    assert cache["details"]["path"] == str(tmp_path / ".cache" / "hipacm")
    assert cache["details"]["source"] == "HOME"
    env = {"HIPACM_CACHE_DIR": str(tmp_path / "explicit")}
    cache = checks_by_name(run("doctor", "--json", env=env).json())["cache"]
    assert cache["details"]["path"] == str(tmp_path / "explicit")
    assert cache["level"] == "ok" and cache["details"]["writable"] is True


def test_doctor_warns_about_an_unwritable_cache(run, tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    r = run("doctor", "--json", env={"HIPACM_CACHE_DIR": str(not_a_dir)})
    cache = checks_by_name(r.json())["cache"]
    assert cache["level"] == "warning"
    assert cache["details"]["writable"] is False
    assert "HIPACM_CACHE_DIR" in cache["hint"]


def test_doctor_hints_at_hipacm_arch_when_there_is_no_default(run):
    doc = run("doctor", "--json").json()
    arch = checks_by_name(doc)["arch"]
    if arch["details"]["source"] == "device":
        pytest.skip("this machine has a GPU, so there is a default arch")
    assert arch["level"] == "warning"
    assert "HIPACM_ARCH" in arch["hint"]


def test_doctor_fails_without_hiprtc_and_says_what_to_install(run, tmp_path):
    hiprtc = checks_by_name(run("doctor", "--json").json())["hiprtc"]["details"]["path"]
    env = {"HIPACM_HIPRTC_LIBRARY": str(tmp_path / "libmissing.so")}
    r = run("doctor", env=env)
    assert r.rc == 1
    assert "[error  ] hiprtc" in r.out
    assert "hint: install hipRTC" in r.out
    if hiprtc:  # the package of this machine's own hipRTC (libamdhip64-5, libhiprtc6, ...)
        assert rocm_facts.hiprtc_package(hiprtc) in r.out
    doc = run("doctor", "--json", env=env).json()
    assert doc["usable"] is False
    assert checks_by_name(doc)["hiprtc"]["level"] == "error"
    r = run("--version", env=env)
    assert r.rc == 0 and "hipRTC not found" in r.out


def test_doctor_archs_lists_comgrs_processors_then_nvrtcs_and_nothing_else(run, backend_usable):
    processors = checks_by_name(run("doctor", "--json").json())["comgr"]["details"]["processors"]
    r = run("doctor", "--archs")
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert lines[:len(processors)] == processors and "gfx90a" in lines
    nvidia = lines[len(processors):]
    numbers = [line[len("sm_"):] for line in nvidia if line.startswith("sm_")]
    # Where NVRTC loads: sm_NN for each arch it supports, then compute_NN for the same.
    assert nvidia == [f"sm_{n}" for n in numbers] + [f"compute_{n}" for n in numbers]
    assert all(n.isdigit() for n in numbers)


def test_doctor_archs_without_nvrtc_lists_only_comgrs(run, backend_usable, tmp_path):
    env = {"HIPACM_NVRTC_LIBRARY": str(tmp_path / "libnvrtc-missing.so")}
    r = run("doctor", "--archs", env=env)
    assert r.rc == 0, r.err
    assert r.out.splitlines() == \
        checks_by_name(run("doctor", "--json").json())["comgr"]["details"]["processors"]


def test_doctor_archs_without_any_compiler_fails_and_says_so(run, tmp_path):
    env = {"HIPACM_HIPRTC_LIBRARY": str(tmp_path / "libhiprtc-missing.so"),
           "HIPACM_COMGR_LIBRARY": str(tmp_path / "libcomgr-missing.so"),
           "HIPACM_NVRTC_LIBRARY": str(tmp_path / "libnvrtc-missing.so")}
    r = run("doctor", "--archs", env=env)
    assert r.rc == 1
    assert r.out == ""
    assert "neither comgr nor NVRTC was found here" in r.err


def test_doctor_archs_and_json_exclude_each_other(run):
    r = run("doctor", "--archs", "--json")
    assert r.rc == 2
    assert "excludes" in r.err


def test_doctor_warns_when_the_worker_is_missing(run, tmp_path):
    env = {"HIPACM_WORKER": str(tmp_path / "no-worker")}
    worker = checks_by_name(run("doctor", "--json", env=env).json())["worker"]
    assert worker["level"] == "warning"
    assert worker["details"]["found"] is False
    assert "HIPACM_WORKER" in worker["hint"]


def test_doctor_warns_about_a_default_arch_that_comgr_does_not_know(run, backend_usable):
    # An arch comgr does not list would abort hipRTC, so doctor flags it instead of passing it on.
    arch = checks_by_name(run("doctor", "--json", env={"HIPACM_ARCH": "gfx9999"}).json())["arch"]
    assert arch["level"] == "warning"
    assert "gfx9999" in arch["summary"] and "not usable" in arch["summary"]
    assert "HIPACM_ARCH" in arch["hint"]


def test_doctor_shows_the_machine_wide_worker_budget(run, tmp_path):
    runtime = tmp_path / "run"
    r = run("doctor", "--json", env={"HIPACM_MACHINE_JOBS": "3", "HIPACM_RUNTIME_DIR": str(runtime)})
    worker = checks_by_name(r.json())["worker"]
    assert worker["details"]["machine_jobs"] == 3
    assert worker["details"]["machine_jobs_in_use"] == 0
    assert worker["details"]["machine_slot_file"] == str(runtime / "worker-slots")
    assert (runtime.stat().st_mode & 0o777) == 0o700
    if worker["details"]["found"]:
        assert "machine-wide budget 3 compiling workers (0 in use now)" in worker["summary"]

    r = run("doctor", "--json", env={"HIPACM_MACHINE_JOBS": "off"})
    assert checks_by_name(r.json())["worker"]["details"]["machine_jobs"] == 0


def test_doctor_shows_the_prestart_setting_and_fails_a_bad_one(run):
    worker = checks_by_name(run("doctor", "--json").json())["worker"]
    assert worker["details"]["prestart_workers"] == "off"
    r = run("doctor", "--json", env={"HIPACM_PRESTART_WORKERS": "on"})
    assert checks_by_name(r.json())["worker"]["details"]["prestart_workers"] == "on"
    r = run("doctor", "--json", env={"HIPACM_PRESTART_WORKERS": "lots"})
    assert r.rc != 0
    worker = checks_by_name(r.json())["worker"]
    assert worker["level"] == "error"
    assert "HIPACM_PRESTART_WORKERS is 'lots'" in worker["summary"]
    assert "every mode enter fails" in worker["summary"]


def test_doctor_says_why_an_unsafe_runtime_directory_turns_the_budget_off(run, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    r = run("doctor", "--json", env={"HIPACM_MACHINE_JOBS": "4", "HIPACM_RUNTIME_DIR": str(shared)})
    details = checks_by_name(r.json())["worker"]["details"]
    assert details["machine_jobs"] == 0
    assert details["machine_jobs_in_use"] is None
    assert "writable by other users" in details["machine_jobs_off_because"]
    assert not (shared / "worker-slots").exists()


def test_doctor_counts_the_runtime_header_pchs(run, tmp_path):
    runtime = tmp_path / "run"

    def worker_check(pch_setting=None):
        """The doctor's worker check for this runtime directory, with HIPACM_HIPRTC_PCH if given."""
        env = {"HIPACM_RUNTIME_DIR": str(runtime)}
        if pch_setting is not None:
            env["HIPACM_HIPRTC_PCH"] = pch_setting
        return checks_by_name(run("doctor", "--json", env=env).json())["worker"]

    worker = worker_check()
    assert worker["details"]["hiprtc_pch"] == "on"
    assert worker["details"]["hiprtc_pch_dir"] == str(runtime / "pch")
    assert worker["details"]["hiprtc_pch_ready"] == 0
    assert worker["details"]["hiprtc_pch_refused"] == 0
    store = runtime / "pch"
    assert (store.stat().st_mode & 0o777) == 0o700
    ready = store / ("a" * 64)
    ready.mkdir(mode=0o700)
    pch = b"CPCH" + b"\x01" * 64
    (ready / "hiprtc_runtime.h.pch").write_bytes(pch)
    (ready / "hiprtc_runtime.h.pch.sha256").write_text(hashlib.sha256(pch).hexdigest())
    # Nor one whose bytes are not the ones its digest names.
    changed = store / ("e" * 64)
    changed.mkdir(mode=0o700)
    (changed / "hiprtc_runtime.h.pch").write_bytes(pch + b"\x02")
    (changed / "hiprtc_runtime.h.pch.sha256").write_text(hashlib.sha256(pch).hexdigest())
    # Neither counts: a PCH behind a link, and one that does not begin like a PCH.
    linked = store / ("b" * 64)
    linked.mkdir(mode=0o700)
    (linked / "hiprtc_runtime.h.pch").symlink_to(ready / "hiprtc_runtime.h.pch")
    bogus = store / ("c" * 64)
    bogus.mkdir(mode=0o700)
    (bogus / "hiprtc_runtime.h.pch").write_bytes(b"#include <x>\n")
    (store / (("d" * 64) + ".refused")).write_text("differed")
    (store / "not-a-key.refused").write_text("ignored")
    worker = worker_check()
    assert worker["details"]["hiprtc_pch_ready"] == 1
    assert worker["details"]["hiprtc_pch_refused"] == 1
    if worker["details"]["found"]:
        assert "1 runtime-header PCHs ready" in worker["summary"]
    off = worker_check("off")
    assert off["details"]["hiprtc_pch"] == "off"
    if off["details"]["found"]:
        assert "runtime-header PCH off" in off["summary"]
    check = worker_check("check")
    assert check["details"]["hiprtc_pch"] == "check"
    worker = worker_check("maybe")
    assert worker["details"]["hiprtc_pch"] == "on"
    if worker["details"]["found"]:
        assert worker["level"] == "warning"
        assert "HIPACM_HIPRTC_PCH='maybe'" in worker["summary"]
        assert "on, off or check" in worker["hint"]


# --- intercept: would a program started here go through `hipacm run`'s library? ---------------

SHIM = "libhipacm_intercept.so"


def sanitized(cli_path):
    """Whether the tool is a sanitizer build: its runtime must come first in the process, so
    preloading the (instrumented) intercept library in front of it makes the tool refuse to start.
    Those checks run in the release build, as the intercept suite does."""
    listed = subprocess.run(["ldd", cli_path], capture_output=True, text=True, check=False).stdout
    return any(runtime in listed for runtime in ("libasan", "libtsan", "libubsan"))


def skip_preloading_in_sanitizer_builds(cli_path):
    if sanitized(cli_path):
        pytest.skip("a sanitizer build refuses a library preloaded before its runtime")


def shim_beside(cli_path):
    path = os.path.join(os.path.dirname(os.path.realpath(cli_path)), SHIM)
    if not os.path.isfile(path):
        pytest.fail(f"{path} is missing: build the hipacm_intercept target")
    return path


def test_doctor_says_a_plain_environment_is_not_intercepted(run, cli_path):
    r = run("doctor", "--json", env={"LD_PRELOAD": None})
    check = checks_by_name(r.json())["intercept"]
    assert check["level"] == "info", check
    assert check["details"]["found"] is True
    assert os.path.realpath(check["details"]["path"]) == shim_beside(cli_path)
    assert check["details"]["ld_preload"] is None
    assert check["details"]["preloaded"] is False
    assert check["details"]["intercepted"] is False and check["details"]["loaded"] == []
    assert "not intercepted" in check["summary"]
    assert "hipacm run -- COMMAND" in check["hint"] and "--print-env" in check["hint"]
    text = run("doctor", env={"LD_PRELOAD": None}).out
    assert "] intercept " in text and "not in LD_PRELOAD" in text


def test_doctor_under_hipacm_run_is_intercepted(run, cli_path):
    skip_preloading_in_sanitizer_builds(cli_path)
    # `hipacm run` preloads the library into COMMAND, here doctor itself: the dynamic linker
    # mapped it, which is what doctor reports.
    r = run("run", "--", cli_path, "doctor", "--json", env={"LD_PRELOAD": None})
    assert r.rc == 0, r.err[-2000:]
    doc = r.json()
    check = checks_by_name(doc)["intercept"]
    assert check["level"] == "ok", check
    assert check["details"]["preloaded"] is True and check["details"]["intercepted"] is True
    assert [os.path.realpath(p) for p in check["details"]["loaded"]] == [shim_beside(cli_path)]
    assert check["details"]["preload_entries"] == [check["details"]["path"]]
    assert "are intercepted" in check["summary"]
    assert check["hint"] is None
    assert doc["usable"] is True or checks_by_name(doc)["hiprtc"]["level"] == "error"


def test_doctor_after_print_env_is_intercepted(run, cli_path):
    skip_preloading_in_sanitizer_builds(cli_path)
    # eval "$(hipacm run --print-env)": the shell's LD_PRELOAD, as a job script sets it.
    printed = run("run", "--print-env", env={"LD_PRELOAD": "libc.so.6"})
    assert printed.rc == 0, printed.err
    line = printed.out.strip()
    assert line.startswith("export LD_PRELOAD='") and line.endswith("'"), line
    preload = line[len("export LD_PRELOAD='"):-1]
    check = checks_by_name(run("doctor", "--json", env={"LD_PRELOAD": preload}).json())["intercept"]
    assert check["level"] == "ok", check
    assert check["details"]["ld_preload"] == preload
    assert check["details"]["preloaded"] is True and check["details"]["intercepted"] is True


def test_doctor_warns_when_ld_preload_names_a_missing_intercept_library(run, tmp_path):
    missing = str(tmp_path / SHIM)
    r = run("doctor", "--json", env={"LD_PRELOAD": missing})
    check = checks_by_name(r.json())["intercept"]
    assert check["level"] == "warning", check
    assert check["details"]["preload_entries"] == [missing]
    assert check["details"]["preloaded"] is False and check["details"]["intercepted"] is False
    assert missing in check["summary"] and "did not load it" in check["summary"]
    assert r.rc == 0, "a warning leaves hipacm usable"


def test_doctor_names_another_builds_intercept_library(run, cli_path, tmp_path):
    skip_preloading_in_sanitizer_builds(cli_path)
    other = tmp_path / "other" / SHIM
    other.parent.mkdir()
    shutil.copyfile(shim_beside(cli_path), other)
    check = checks_by_name(run("doctor", "--json", env={"LD_PRELOAD": str(other)}).json())[
        "intercept"]
    assert check["level"] == "info", check
    assert check["details"]["preloaded"] is False and check["details"]["intercepted"] is True
    assert check["details"]["loaded"] == [str(other)]
    assert str(other) in check["summary"] and "another" in check["summary"]


# --- Trust2_04: the runtime directory ---------------------------------------------------------

def saxpy_warmup(run, env, timeout=300):
    return run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-q", env=env, timeout=timeout)


def test_trust2_04_a_taken_default_runtime_directory_moves_home_and_doctor_warns(
        run, backend_usable, tmp_path):
    # XDG_RUNTIME_DIR/hipacm made first by someone else and open to all, as /tmp/hipacm-<uid>
    # can be: the features move to a private place under the home, and doctor says so.
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    taken = xdg / "hipacm"
    taken.mkdir()
    taken.chmod(0o777)
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {"HIPACM_RUNTIME_DIR": None, "XDG_RUNTIME_DIR": str(xdg), "XDG_CACHE_HOME": None,
           "HOME": str(home), "HIPACM_CACHE": "off", "HIPACM_MACHINE_JOBS": "2"}
    worker = checks_by_name(run("doctor", "--json", env=env).json())["worker"]
    assert worker["level"] == "warning", worker
    assert str(taken) in worker["summary"], worker["summary"]
    fallback = worker["details"]["runtime_dir"]
    assert fallback.startswith(str(home / ".cache" / "hipacm" / "run-")), fallback
    assert worker["details"]["runtime_dir_passed_over"] == str(taken)
    assert worker["details"]["machine_slot_file"] == fallback + "/worker-slots"
    r = saxpy_warmup(run, env)
    assert r.rc == 0, r.err[-2000:]
    assert any((home / ".cache" / "hipacm").glob("run-*/facts/*")), "facts live in the fallback"
    assert list(taken.iterdir()) == [], "nothing goes into the directory that was taken"


@pytest.mark.parametrize("kind", ["busy", "open"])
def test_trust2_04_a_named_runtime_directory_not_dedicated_to_hipacm_is_refused(
        run, backend_usable, tmp_path, kind):
    named = tmp_path / kind
    named.mkdir(mode=0o700)
    if kind == "busy":
        (named / "notes.txt").write_text("the user's own file\n")  # as / or a home would hold
    else:
        named.chmod(0o755)  # open to others, as / is
    before = sorted(p.name for p in named.iterdir())
    env = {"HIPACM_RUNTIME_DIR": str(named), "HIPACM_CACHE": "off", "HIPACM_MACHINE_JOBS": "2",
           "HIPACM_ISOLATION": "service=auto"}
    worker = checks_by_name(run("doctor", "--json", env=env).json())["worker"]
    assert worker["level"] == "warning", worker
    assert worker["details"]["runtime_dir_usable"] is False
    reason = worker["details"]["runtime_dir_unusable_because"]
    assert ("notes.txt" if kind == "busy" else "mode 0755") in reason, reason
    assert worker["details"]["machine_jobs"] == 0
    r = saxpy_warmup(run, env)
    assert r.rc == 0, r.err[-2000:]
    assert sorted(p.name for p in named.iterdir()) == before, "nothing was written into it"


def test_trust2_04_a_fifo_in_the_runtime_directory_hangs_neither_warmup_nor_doctor(
        run, backend_usable, tmp_path):
    runtime = tmp_path / "run"
    env = {"HIPACM_RUNTIME_DIR": str(runtime), "HIPACM_CACHE": "off"}
    r = saxpy_warmup(run, env)
    assert r.rc == 0, r.err[-2000:]
    facts = sorted((runtime / "facts").iterdir())
    assert facts, "the first run remembers library facts"
    for fact in facts:  # each remembered fact becomes a FIFO nobody writes to
        fact.unlink()
        os.mkfifo(fact, 0o600)
    published = runtime / "pch" / ("f" * 64)
    published.mkdir(parents=True, mode=0o700)
    os.mkfifo(published / "hiprtc_runtime.h.pch", 0o600)
    (published / "hiprtc_runtime.h.pch.sha256").write_text("0" * 64)
    # Generous bounds, only to tell a hang from a run: each finishes in seconds.
    r = saxpy_warmup(run, env, timeout=240)
    assert r.rc == 0, r.err[-2000:]
    doctor = run("doctor", "--json", env=env, timeout=120)
    worker = checks_by_name(doctor.json())["worker"]
    assert worker["details"]["hiprtc_pch_ready"] == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as two users")
def test_trust2_04_a_taken_tmp_runtime_directory_moves_home_and_doctor_warns(cli_path, tmp_path):
    # /tmp/hipacm-<uid> itself, made first by another user (root here) for a victim with no
    # XDG_RUNTIME_DIR: the victim's doctor names it and the features move under the home.
    victim = next((uid for uid in (65531, 65530, 65529) if not os.path.lexists(f"/tmp/hipacm-{uid}")),
                  None)
    if victim is None:
        pytest.skip("every candidate uid already has a /tmp/hipacm-<uid>")
    taken = f"/tmp/hipacm-{victim}"
    os.mkdir(taken, 0o755)
    top = tempfile.mkdtemp(prefix="hipacm-trust2-")
    try:
        os.chmod(top, 0o755)
        home = os.path.join(top, "home")
        os.mkdir(home, 0o700)
        os.chown(home, victim, victim)
        env = {k: v for k, v in os.environ.items()
               if k not in ("HIPACM_RUNTIME_DIR", "XDG_RUNTIME_DIR", "XDG_CACHE_HOME")}
        env.update(HOME=home, HIPACM_CACHE="off", HIPACM_CACHE_DIR=os.path.join(home, "cache"),
                   HIPACM_MACHINE_JOBS="2")

        def become_victim():
            os.setgroups([])
            os.setgid(victim)
            os.setuid(victim)

        r = subprocess.run([cli_path, "doctor", "--json"], env=env, capture_output=True, text=True,
                           preexec_fn=become_victim, timeout=120, cwd=home)
        worker = checks_by_name(json.loads(r.stdout))["worker"]
        assert worker["level"] == "warning", worker
        assert taken in worker["summary"] and "another user" in worker["summary"], worker
        assert worker["details"]["runtime_dir"].startswith(home + "/.cache/hipacm/run-")
        assert worker["details"]["machine_jobs"] == 2
        assert os.listdir(taken) == []
    finally:
        os.rmdir(taken)
        shutil.rmtree(top, ignore_errors=True)
