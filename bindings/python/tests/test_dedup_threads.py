# SPDX-License-Identifier: MIT
"""Dedup under contention, digests, and threads racing the exit."""

import sys
import threading
import time

import pytest

import hipacm
from hipacm import _callbacks
from conftest import ARCH, STATIC_ASSERT_SOURCE, good_source

THREADS = 8


def test_threads_submitting_one_key_share_one_compile_and_one_finalize():
    barrier = threading.Barrier(THREADS)
    lock = threading.Lock()
    finalized = []
    futures = [None] * THREADS
    kernels = [None] * THREADS
    errors = []

    def finalize(kernel):
        with lock:
            finalized.append((threading.get_ident(), kernel))

    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        def run(i):
            try:
                barrier.wait(10)
                futures[i] = mode.submit("dedup-key", good_source("dedup"), finalize=finalize)
                barrier.wait(10)  # everyone collects at once: contention on the callback
                kernels[i] = futures[i].result()
            except BaseException as exc:  # noqa: B902
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors
        assert len(mode._futures) == 1  # one plugin future in this mode

    first = futures[0]
    assert all(f is first for f in futures)  # same FutureKernel object
    assert len({id(k) for k in kernels}) == 1
    assert len(finalized) == 1  # exactly once, on one of the collecting threads
    assert finalized[0][1] is kernels[0]
    assert kernels[0].key == "dedup-key"
    assert kernels[0].code[:4] == b"\x7fELF"


def test_many_keys_from_many_threads_each_get_one_future_and_one_callback():
    keys = [f"race-{i}" for i in range(24)]
    barrier = threading.Barrier(THREADS)
    lock = threading.Lock()
    calls = {key: 0 for key in keys}
    got = [dict() for _ in range(THREADS)]
    errors = []

    def count(key):
        def callback(_arg):
            with lock:
                calls[key] += 1
        return callback

    # One worker, busy with a failing compile; fail_fast then cancels whatever
    # is queued behind it, so the race costs (almost) no compiles.
    with pytest.raises(hipacm.CompilationError):
        with hipacm.AsyncCompileMode(1, arch=ARCH, fail_fast=True) as mode:
            mode.submit("race-blocker", STATIC_ASSERT_SOURCE)

            def run(i):
                try:
                    for key in keys:
                        barrier.wait(10)  # all threads race on every key
                        got[i][key] = mode.submit(key, good_source(key.replace("-", "_")),
                                                  finalize=count(key), cleanup=count(key))
                except BaseException as exc:  # noqa: B902
                    errors.append(exc)

            threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
            interval = sys.getswitchinterval()
            sys.setswitchinterval(1e-6)  # switch threads as often as possible
            try:
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(60)
            finally:
                sys.setswitchinterval(interval)
    assert not errors, errors
    for key in keys:
        assert len({id(g[key]) for g in got}) == 1, key  # one FutureKernel per key
    assert calls == {key: 1 for key in keys}  # the attached callbacks ran, once


def test_dedup_hit_callbacks_are_never_called_and_released_at_exit():
    calls = []
    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        first = mode.submit("dedup-cb", good_source(), finalize=lambda k: calls.append("first"))
        second = mode.submit("dedup-cb", good_source(), finalize=lambda k: calls.append("second"))
        assert second is first
        assert _callbacks._live_callback_entries() == 2  # the hit's entry lives until exit
    assert calls == ["first"]
    assert _callbacks._live_callback_entries() == 0


def test_default_key_is_a_content_digest():
    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        a = mode.submit(None, good_source("digest"))
        b = mode.submit(None, good_source("digest"))
        c = mode.submit(None, good_source("digest"), options=["-O1"])
    assert a.key.startswith("sha256:")
    assert len(a.key) == len("sha256:") + 64
    int(a.key[len("sha256:"):], 16)
    assert b is a  # same content, same digest, one compile
    assert c.key != a.key and c.key.startswith("sha256:")
    assert a.result().key == a.key


def test_a_compile_failure_in_a_thread_while_main_is_in_exit():
    cleaned = []
    submitted = threading.Event()
    outcome = {}

    def worker(mode):
        future = mode.submit("thread-bad", STATIC_ASSERT_SOURCE, cleanup=cleaned.append)
        submitted.set()
        try:
            future.result()  # races the main thread's exit to collect it
            outcome["result"] = "no error"
        except BaseException as exc:  # noqa: B902
            outcome["result"] = exc

    with pytest.raises(hipacm.CompilationError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            thread = threading.Thread(target=worker, args=(mode,))
            thread.start()
            assert submitted.wait(30)
    thread.join(60)
    assert not thread.is_alive()
    assert hipacm.active_mode() is None
    assert info.value.key == "thread-bad"
    assert info.value.status == hipacm.Status.COMPILATION
    assert isinstance(outcome["result"], hipacm.CompilationError), outcome
    assert outcome["result"].key == "thread-bad"
    assert len(cleaned) == 1


def test_a_submit_from_a_thread_once_exit_has_begun_gets_mode_closed():
    outcome = {}
    entered = threading.Event()

    def late_submitter():
        entered.wait(30)
        while hipacm.active_mode() is not None:  # None: the exit has reset the slot
            time.sleep(0.001)
        try:
            outcome["future"] = _mode.submit("late", STATIC_ASSERT_SOURCE,
                                             cleanup=lambda e: outcome.setdefault("cleanup", e))
        except BaseException as exc:  # noqa: B902
            outcome["error"] = exc

    thread = threading.Thread(target=late_submitter)
    thread.start()
    with hipacm.AsyncCompileMode(2, arch=ARCH) as _mode:
        _mode.submit("keeps-exit-busy", good_source("busy"))
        entered.set()
    thread.join(60)
    assert isinstance(outcome.get("error"), hipacm.ModeClosedError), outcome
    assert outcome["error"].status == hipacm.Status.MODE_CLOSED
    assert "cleanup" not in outcome
