# SPDX-License-Identifier: MIT
"""Exceptions: the body's wins, callback exceptions reach their collector."""

import threading

import pytest

import hipacm
from conftest import ARCH, STATIC_ASSERT_SOURCE, Boom, good_source


def raise_boom(_arg):
    raise Boom("from a callback")


def test_body_exception_wins_over_a_compile_error():
    cleaned = []
    with pytest.raises(KeyError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            future = mode.submit("body-bad", STATIC_ASSERT_SOURCE, cleanup=cleaned.append)
            raise KeyError("from the body")
    assert info.value.args == ("from the body",)
    assert not isinstance(info.value.__context__, hipacm.CompilationError)
    assert hipacm.active_mode() is None
    # Exit still collected the failed compile, exactly once.
    assert len(cleaned) == 1
    assert future.status == hipacm.Status.COMPILATION
    with pytest.raises(hipacm.CompilationError):
        future.result()


def test_result_ignore_errors_returns_none():
    with hipacm.AsyncCompileMode(2, arch=ARCH, ignore_errors=True) as mode:
        bad = mode.submit("ignore-bad", STATIC_ASSERT_SOURCE)
        good = mode.submit("ignore-good", good_source())
        assert bad.result(ignore_errors=True) is None
        assert good.result(ignore_errors=True).code[:4] == b"\x7fELF"
    # ignore_errors=True on the mode: exit did not raise either.
    assert bad.result(ignore_errors=True) is None
    assert bad.status == hipacm.Status.COMPILATION
    with pytest.raises(hipacm.CompilationError) as info:
        bad.result()
    assert info.value.key == "ignore-bad" and "X must be 2" in info.value.log


def test_finalize_exception_is_reraised_by_result(capfd):
    cleaned = []
    with pytest.raises(hipacm.CompilationError) as exit_info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            future = mode.submit("fin-raise", good_source(), finalize=raise_boom,
                                 cleanup=cleaned.append)
            with pytest.raises(Boom):
                future.result()
            assert future.status == hipacm.Status.FINALIZE_FAILED
            # Reported once as itself; afterwards as a FINALIZE_FAILED compile error.
            with pytest.raises(hipacm.CompilationError) as again:
                future.result()
            assert again.value.status == hipacm.Status.FINALIZE_FAILED
            assert isinstance(again.value.__cause__, Boom)
            assert future.result(ignore_errors=True) is None
    assert exit_info.value.status == hipacm.Status.FINALIZE_FAILED
    assert exit_info.value.key == "fin-raise"
    assert len(cleaned) == 1
    assert cleaned[0].status == hipacm.Status.FINALIZE_FAILED
    assert isinstance(cleaned[0].__cause__, Boom)
    # Nothing was printed by ctypes ("Exception ignored on calling ctypes callback").
    assert "Boom" not in capfd.readouterr().err


def test_finalize_exception_collected_by_exit_is_raised_from_exit(capfd):
    with pytest.raises(Boom):
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            future = mode.submit("fin-raise-exit", good_source(), finalize=raise_boom)
    with pytest.raises(hipacm.CompilationError) as info:
        future.result()  # already reported by __exit__: not re-raised as Boom
    assert info.value.status == hipacm.Status.FINALIZE_FAILED
    assert "Boom" not in capfd.readouterr().err


def test_cleanup_exception_is_raised_from_exit_chained_to_the_compile_error():
    with pytest.raises(Boom) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            mode.submit("cleanup-raise", STATIC_ASSERT_SOURCE, cleanup=raise_boom)
    assert isinstance(info.value.__context__, hipacm.CompilationError)
    assert info.value.__context__.key == "cleanup-raise"


def test_callback_exception_behind_a_body_exception_is_kept_for_result():
    with pytest.raises(KeyError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            future = mode.submit("fin-behind-body", good_source(), finalize=raise_boom)
            raise KeyError("body")
    notes = getattr(info.value, "__notes__", [])
    if hasattr(info.value, "add_note"):
        assert any("fin-behind-body" in n and "Boom" in n for n in notes), notes
    with pytest.raises(Boom):  # not lost: the next collector gets it, once
        future.result()
    with pytest.raises(hipacm.CompilationError):
        future.result()


def test_finalize_exception_goes_to_the_collecting_thread_only():
    gate = threading.Event()
    seen = {}

    def slow_boom(_kernel):
        seen["thread"] = threading.get_ident()
        gate.wait(10)
        raise Boom("collector only")

    with pytest.raises(hipacm.CompilationError):
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            future = mode.submit("fin-thread", good_source(), finalize=slow_boom)
            outcome = {}

            def collect(name):
                try:
                    future.result()
                    outcome[name] = None
                except BaseException as exc:  # noqa: B902
                    outcome[name] = exc

            threads = [threading.Thread(target=collect, args=(i,)) for i in range(3)]
            for t in threads:
                t.start()
            while "thread" not in seen:
                threads[0].join(0.01)
            gate.set()
            for t in threads:
                t.join(30)
    booms = [e for e in outcome.values() if isinstance(e, Boom)]
    assert len(booms) == 1, outcome
    others = [e for e in outcome.values() if not isinstance(e, Boom)]
    assert all(isinstance(e, hipacm.CompilationError) and isinstance(e.__cause__, Boom)
               for e in others), outcome


def test_base_exception_in_finalize_is_reraised_not_swallowed():
    def interrupt(_kernel):
        raise KeyboardInterrupt

    with pytest.raises(hipacm.CompilationError):
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            future = mode.submit("fin-kbi", good_source(), finalize=interrupt)
            with pytest.raises(KeyboardInterrupt):
                future.result()


def test_active_mode_is_none_while_exit_collects_and_callbacks_may_enter_a_new_mode():
    seen = []

    def finalize(kernel):
        seen.append(hipacm.active_mode())  # the slot was reset before collection
        with hipacm.AsyncCompileMode(arch=ARCH) as inner:
            seen.append(hipacm.active_mode() is inner)

    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
        mode.submit("seen-during-exit", good_source(), finalize=finalize)
    assert seen == [None, True]


def test_a_held_exception_belongs_to_its_collector_even_if_another_caller_asks_first():
    seen = []

    def b_finalize(_kernel):
        try:
            a.result()  # a's finalize raised earlier in this same exit
        except BaseException as exc:  # noqa: B902
            seen.append(exc)

    with pytest.raises(Boom):  # the exit collected a's failure: it raises Boom itself
        with hipacm.AsyncCompileMode(1, arch=ARCH) as mode:  # one worker: a completes first
            a = mode.submit("held-a", good_source("ha"), finalize=raise_boom)
            mode.submit("held-b", good_source("hb"), finalize=b_finalize)
    assert len(seen) == 1
    assert isinstance(seen[0], hipacm.CompilationError), seen
    assert isinstance(seen[0].__cause__, Boom)


def test_result_inside_its_own_finalize_returns_the_kernel_without_caching_it():
    inner = []

    def finalize(kernel):
        inner.append(future.result())  # re-entrant: the compile outcome, at once
        raise Boom("after peeking")

    with pytest.raises(hipacm.CompilationError):  # Boom was reported by result() already
        with hipacm.AsyncCompileMode(arch=ARCH) as mode:
            future = mode.submit("reentrant", good_source(), finalize=finalize)
            with pytest.raises(Boom):
                future.result()
    assert inner and inner[0].code[:4] == b"\x7fELF"
    with pytest.raises(hipacm.CompilationError):  # the failed finalize is not hidden
        future.result()
