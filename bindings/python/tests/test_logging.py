# SPDX-License-Identifier: MIT
"""Plugin log events reach logging.getLogger("hipacm") and never fd 2 (ABI 1.4)."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hipacm
from hipacm import _ffi, _logging
from conftest import ARCH, good_source

PACKAGE_PARENT = Path(hipacm.__file__).resolve().parents[1]


@pytest.fixture
def restore_logger_level():
    logger = logging.getLogger("hipacm")
    before = logger.level
    yield logger
    hipacm.set_log_level(before)


def compile_with_damaged_cache(tmp_path, monkeypatch, name="damaged"):
    """A real compile whose cache file is not a database: the plugin warns that
    it moved the file aside (every time, not once per process)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "kernels.sqlite3").write_bytes(b"not a database\0" * 512)
    monkeypatch.setenv("HIPACM_CACHE", "readwrite")
    with hipacm.AsyncCompileMode(arch=ARCH, cache=cache) as mode:
        future = mode.submit(None, good_source(name))
    assert future.result().code[:4] == b"\x7fELF"
    return cache


def damaged_records(caplog):
    return [r for r in caplog.records if r.name == "hipacm" and "is damaged" in r.getMessage()]


def test_a_plugin_warning_is_a_log_record_and_nothing_reaches_fd_2(tmp_path, monkeypatch,
                                                                    caplog, capfd):
    caplog.set_level(logging.WARNING, logger="hipacm")
    cache = compile_with_damaged_cache(tmp_path, monkeypatch)
    records = damaged_records(caplog)
    assert len(records) == 1, caplog.records
    assert records[0].levelno == logging.WARNING
    assert str(cache / "kernels.sqlite3") in records[0].getMessage()
    assert not records[0].getMessage().startswith("hipacm:")  # the plugin's prefix is not kept
    err = capfd.readouterr().err
    assert "damaged" not in err and "hipacm:" not in err, err


def test_the_plugin_level_follows_the_logger_level(restore_logger_level, tmp_path, monkeypatch,
                                                   caplog, capfd):
    monkeypatch.delenv("HIPACM_LOG", raising=False)
    logger = restore_logger_level
    hipacm.set_log_level(logging.DEBUG)
    assert _logging.registered_level() == _ffi.LOG_DEBUG
    hipacm.set_log_level("INFO")
    assert _logging.registered_level() == _ffi.LOG_INFO
    # Lowered after import without set_log_level: the next mode entry reads it.
    logger.setLevel(logging.DEBUG)
    with hipacm.AsyncCompileMode(arch=ARCH):
        assert _logging.registered_level() == _ffi.LOG_DEBUG
    # Above warning: the plugin drops the warning itself, and fd 2 stays quiet.
    hipacm.set_log_level(logging.ERROR)
    assert _logging.registered_level() == _ffi.LOG_ERROR
    compile_with_damaged_cache(tmp_path, monkeypatch)
    assert damaged_records(caplog) == []
    err = capfd.readouterr().err
    assert "damaged" not in err, err


def test_hipacm_log_off_silences_the_plugin(restore_logger_level, tmp_path, monkeypatch, caplog,
                                            capfd):
    monkeypatch.setenv("HIPACM_LOG", "off")
    caplog.set_level(logging.DEBUG, logger="hipacm")
    compile_with_damaged_cache(tmp_path, monkeypatch)
    assert _logging.registered_level() == _ffi.LOG_OFF
    assert damaged_records(caplog) == []
    err = capfd.readouterr().err
    assert "damaged" not in err, err
    monkeypatch.setenv("HIPACM_LOG", "error")
    hipacm.set_log_level(logging.DEBUG)
    assert _logging.registered_level() == _ffi.LOG_ERROR  # $HIPACM_LOG caps the logger


def run_python(script, **env_overrides):
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_PARENT), HIPACM_LIBRARY=hipacm.library_path)
    env.pop("HIPACM_LOG", None)
    env.update(env_overrides)
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=180)


# Records go to stdout, so that the process's fd 2 must stay empty.
COLLECT = r'''
import logging, sys
class Collect(logging.Handler):
    def emit(self, record):
        print("RECORD", record.levelname, record.name, record.getMessage(), flush=True)
logging.getLogger("hipacm").addHandler(Collect())
'''


def test_a_once_per_process_warning_from_a_worker_less_compile(tmp_path):
    # No usable worker: the plugin warns once and compiles in-process.
    script = COLLECT + r'''
import hipacm
with hipacm.AsyncCompileMode(arch="gfx90a") as mode:
    future = mode.submit(None, 'extern "C" __global__ void k(int* p) { *p = 1; }')
print("ELF", future.result().code[:4] == b"\x7fELF")
'''
    proc = run_python(script, HIPACM_WORKER=str(tmp_path / "no-such-worker"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert "ELF True" in lines
    records = [line for line in lines if line.startswith("RECORD WARNING hipacm ")]
    assert len(records) == 1 and "hipacm-worker not found" in records[0], lines


@pytest.mark.parametrize("level, expected", [("INFO", 1), ("WARNING", 0)])
def test_an_info_event_arrives_only_when_the_logger_wants_info(level, expected):
    # Starting a worker is an info event; the first compile of the process starts one.
    script = COLLECT + f"""
import hipacm, logging
logging.getLogger("hipacm").setLevel(logging.{level})
with hipacm.AsyncCompileMode(arch="gfx90a", isolation="process") as mode:
    mode.submit(None, 'extern "C" __global__ void k(int* p) {{ *p = 1; }}')
print("level", hipacm._logging.registered_level())
"""
    proc = run_python(script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    started = [line for line in lines
               if line.startswith("RECORD INFO hipacm ") and "hipacm-worker" in line]
    assert len(started) == expected, lines
    assert lines[-1] == f"level {_ffi.LOG_INFO if expected else _ffi.LOG_WARNING}"


def test_events_after_interpreter_exit_began_go_to_stderr_safely(tmp_path):
    # atexit runs handlers last-registered first: this one, registered before
    # the import, runs after hipacm has unregistered its callback.
    script = COLLECT + r'''
import atexit
def late():
    import hipacm
    with hipacm.AsyncCompileMode(arch="gfx90a"):
        pass
atexit.register(late)
import hipacm
print("registered", hipacm._logging.registered_level())
'''
    proc = run_python(script, HIPACM_WORKER=str(tmp_path / "no-such-worker"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["registered 2"]
    assert "hipacm: warning: hipacm-worker not found" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_forwards_its_events_too(tmp_path, monkeypatch):
    seen = []

    class Collect(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Collect(logging.WARNING)
    logger = logging.getLogger("hipacm")
    logger.addHandler(handler)
    try:
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code only
            code = 1
            try:
                compile_with_damaged_cache(tmp_path, monkeypatch, "child")
                code = 0 if any("is damaged" in m for m in seen) else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    finally:
        logger.removeHandler(handler)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert seen == []  # the child's events stayed in the child


def test_a_raising_handler_never_reaches_the_plugin(tmp_path, monkeypatch, capfd):
    class Raising(logging.Handler):
        def emit(self, record):
            raise KeyError("handler bug")

        def handleError(self, record):  # logging would print the traceback to stderr
            raise

    handler = Raising()
    logger = logging.getLogger("hipacm")
    logger.addHandler(handler)
    try:
        compile_with_damaged_cache(tmp_path, monkeypatch)  # completes normally
    finally:
        logger.removeHandler(handler)
    err = capfd.readouterr().err
    assert "handler bug" not in err and "Exception ignored" not in err, err


@pytest.mark.parametrize("name,plugin_level", [
    ("debug", _ffi.LOG_DEBUG), ("Info", _ffi.LOG_INFO), (" warning ", _ffi.LOG_WARNING),
    ("ERROR", _ffi.LOG_ERROR), ("off", _ffi.LOG_OFF), ("quiet", _ffi.LOG_OFF),
])
def test_level_names_in_any_case_as_hipacm_log_spells_them(restore_logger_level, monkeypatch,
                                                           name, plugin_level):
    monkeypatch.delenv("HIPACM_LOG", raising=False)
    hipacm.set_log_level(name)
    assert _logging.registered_level() == plugin_level


@pytest.mark.parametrize("bad,error", [("loud", ValueError), (None, TypeError),
                                       (1.5, TypeError), (True, TypeError)])
def test_a_level_that_is_not_one_is_refused_and_changes_nothing(restore_logger_level, bad, error):
    before = (restore_logger_level.level, _logging.registered_level())
    with pytest.raises(error):
        hipacm.set_log_level(bad)
    assert (restore_logger_level.level, _logging.registered_level()) == before
