# SPDX-License-Identifier: MIT
"""AsyncCompileMode(progress=...) reports (done, total) as compiles finish, and
every exposed status is a Status, also for a number this package does not know."""

import logging
import pickle
import threading

import pytest

import hipacm
from hipacm import _errors
from conftest import ARCH, STATIC_ASSERT_SOURCE, good_source


def test_progress_counts_every_compile_once_before_exit_returns():
    calls = []
    inside = []

    def progress(done, total):
        inside.append(1)
        assert len(inside) == 1, "progress calls overlapped"
        calls.append((done, total, threading.current_thread().name))
        inside.pop()

    bad = STATIC_ASSERT_SOURCE.replace("void seed(", "void progbad(")
    with hipacm.AsyncCompileMode(2, arch=ARCH, ignore_errors=True, progress=progress) as mode:
        futures = [mode.submit(f"prog-{i}", good_source(f"prog{i}")) for i in range(6)]
        futures.append(mode.submit("prog-bad", bad))
        again = mode.submit("prog-0", good_source("prog0"))  # a dedup hit counts once
        assert again is futures[0]
    # Every call happened, and returned, before __exit__ returned.
    assert [d for d, _, _ in calls] == list(range(1, 8))
    assert calls[-1][:2] == (7, 7)
    assert all(d <= t <= 7 for d, t, _ in calls)
    main = threading.current_thread().name
    assert all(name.startswith("hipacm-watch-") or name == main for _, _, name in calls), calls
    assert futures[-1].status == hipacm.Status.COMPILATION


def test_a_raising_progress_callback_is_logged_and_compiles_go_on(caplog):
    calls = []

    def progress(done, total):
        calls.append(done)
        raise ValueError("from progress")

    with caplog.at_level(logging.ERROR, logger="hipacm"):
        with hipacm.AsyncCompileMode(2, arch=ARCH, progress=progress) as mode:
            futures = [mode.submit(f"progr-{i}", good_source(f"progr{i}")) for i in range(3)]
    assert sorted(calls) == [1, 2, 3]
    assert all(f.result().code[:4] == b"\x7fELF" for f in futures)
    records = [r for r in caplog.records if "progress callback raised" in r.getMessage()]
    assert len(records) == 3 and all(r.exc_info[0] is ValueError for r in records)


def test_progress_must_be_callable_and_a_reentered_mode_counts_afresh():
    with pytest.raises(TypeError):
        hipacm.AsyncCompileMode(progress=3)
    calls = []
    mode = hipacm.AsyncCompileMode(arch=ARCH, progress=lambda d, t: calls.append((d, t)))
    for round_ in range(2):
        with mode:
            mode.submit(f"prog-round-{round_}", good_source(f"round{round_}"))
    assert calls == [(1, 1), (1, 1)]


def test_an_unknown_status_number_is_a_status_with_a_name():
    status = hipacm.Status(99)
    assert isinstance(status, hipacm.Status)
    assert status.name == "UNKNOWN_99" and int(status) == 99 and status == 99
    assert hipacm.Status(99) is status
    assert hipacm.Status(-4).name == "UNKNOWN_MINUS_4"
    assert hipacm.Status.COMPILATION.name == "COMPILATION"
    assert 99 not in [int(s) for s in hipacm.Status]  # the known members are unchanged
    with pytest.raises(ValueError):
        hipacm.Status("COMPILATION")
    with pytest.raises(ValueError):
        hipacm.Status(2**40)
    error = _errors.error_for(77, None)
    assert type(error) is hipacm.HipacmError
    assert error.status.name == "UNKNOWN_77"
    assert str(error) == "hipacm call failed with UNKNOWN_77"
    compile_error = hipacm.CompilationError("m", 1234, "k", "")
    assert isinstance(compile_error.status, hipacm.Status)
    assert "(UNKNOWN_1234)" in str(compile_error)
    assert "status=UNKNOWN_1234" in repr(compile_error)
    again = pickle.loads(pickle.dumps(compile_error))
    assert again.status is compile_error.status


def test_the_exposed_statuses_are_status_members():
    with pytest.raises(hipacm.CompilationError) as info:
        hipacm.compile(STATIC_ASSERT_SOURCE, arch=ARCH, key="status-type")
    assert type(info.value.status) is hipacm.Status
    with hipacm.AsyncCompileMode(arch=ARCH) as mode:
        future = mode.submit("status-type-good", good_source("statustype"))
        assert type(future.status) is hipacm.Status
    assert type(future.status) is hipacm.Status and future.status.name == "SUCCESS"
