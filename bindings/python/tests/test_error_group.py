# SPDX-License-Identifier: MIT
"""__exit__ raises every failed compile at once: a CompilationErrorGroup, an
ExceptionGroup on Python 3.11+, and a CompilationError with .errors on any Python."""

import pickle
import sys

import pytest

import hipacm
from hipacm import _errors
from conftest import ARCH, STATIC_ASSERT_SOURCE, Boom, good_source

HAS_GROUPS = sys.version_info >= (3, 11)


def bad_source(n):
    """A kernel the compiler rejects, different per n so that none dedups."""
    return STATIC_ASSERT_SOURCE.replace("void seed(", f"void seed{n}(")


def three_of_four(mode):
    good = mode.submit("group-good", good_source("groupgood"))
    bad = [mode.submit(f"group-bad-{i}", bad_source(i)) for i in range(3)]
    return good, bad


def check_three_of_four(error, good, bad):
    assert isinstance(error, hipacm.CompilationError)
    assert isinstance(error, hipacm.HipacmError)
    assert len(error.errors) == 3
    assert error.total == 4
    assert sorted(e.key for e in error.errors) == ["group-bad-0", "group-bad-1", "group-bad-2"]
    assert all(isinstance(e, hipacm.CompilationError) and e.status == hipacm.Status.COMPILATION
               and "X must be 2" in e.log for e in error.errors)
    assert tuple(error.exceptions) == tuple(error.errors)
    # The group reads as its first failure, so code written for one error still works.
    assert error.key == error.errors[0].key and error.status == hipacm.Status.COMPILATION
    assert error.log == error.errors[0].log and error.message == error.errors[0].message
    text = str(error)
    assert text.startswith("hipacm: 3 of 4 kernels failed (3 COMPILATION); the first: "), text
    assert "X must be 2" in text
    # The kernel that compiled is kept.
    assert good.result().code[:4] == b"\x7fELF"
    for future in bad:
        with pytest.raises(hipacm.CompilationError) as again:
            future.result()
        assert again.value.key == future.key
        assert not isinstance(again.value, hipacm.CompilationErrorGroup)


def test_exit_raises_every_failure_and_keeps_the_good_kernel():
    with pytest.raises(hipacm.CompilationError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            good, bad = three_of_four(mode)
    assert hipacm.active_mode() is None
    assert isinstance(info.value, hipacm.CompilationErrorGroup)
    check_three_of_four(info.value, good, bad)
    assert isinstance(info.value, ExceptionGroup) == HAS_GROUPS  # noqa: F821


@pytest.mark.skipif(not HAS_GROUPS, reason="except* needs Python 3.11")
def test_except_star_splits_the_group():
    # Compiled here so that this file still parses on Python 3.8.
    code = compile(
        "caught = []\n"
        "try:\n"
        "    with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:\n"
        "        good, bad = three_of_four(mode)\n"
        "except* hipacm.CompilationError as group:\n"
        "    caught.append(group)\n", "<except-star>", "exec")
    scope = {"hipacm": hipacm, "ARCH": ARCH, "three_of_four": three_of_four}
    exec(code, scope)
    (group,) = scope["caught"]
    assert isinstance(group, ExceptionGroup)  # noqa: F821
    assert isinstance(group, hipacm.CompilationErrorGroup)
    assert len(group.exceptions) == 3 and len(group.errors) == 3
    # A split keeps the type and .errors. The condition is asked of the group too, and the group
    # carries its first failure's key: only leaf errors may match, or a group whose first failure
    # is group-bad-1 would match whole.
    part, rest = group.split(lambda e: not isinstance(e, BaseExceptionGroup)  # noqa: F821
                             and getattr(e, "key", "") == "group-bad-1")
    assert rest is not None and part is not None
    assert [e.key for e in part.errors] == ["group-bad-1"] and len(rest.errors) == 2


def test_the_pre_3_11_form_has_errors_and_is_a_compilation_error(monkeypatch):
    monkeypatch.setattr(_errors, "_force_plain_group", True)
    with pytest.raises(hipacm.CompilationError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            good, bad = three_of_four(mode)
    error = info.value
    assert type(error).__name__ == "CompilationErrorGroup"
    if HAS_GROUPS:
        assert not isinstance(error, ExceptionGroup)  # noqa: F821
    check_three_of_four(error, good, bad)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert [e.key for e in again.errors] == [e.key for e in error.errors] and again.total == 4


def test_the_group_pickles_and_needs_an_error():
    errors = [hipacm.CompilationError("m1", hipacm.Status.COMPILATION, "k1", "log1"),
              hipacm.CompilationError("m2", hipacm.Status.TIMEOUT, "k2", "")]
    group = hipacm.CompilationErrorGroup(errors, 5)
    assert str(group).startswith("hipacm: 2 of 5 kernels failed (1 COMPILATION, 1 TIMEOUT); "
                                 "the first: hipacm: compile of 'k1' failed (COMPILATION): m1")
    again = pickle.loads(pickle.dumps(group))
    assert type(again) is hipacm.CompilationErrorGroup
    assert [(e.key, e.status) for e in again.errors] == [("k1", hipacm.Status.COMPILATION),
                                                         ("k2", hipacm.Status.TIMEOUT)]
    assert again.total == 5 and again.key == "k1"
    with pytest.raises(ValueError):
        hipacm.CompilationErrorGroup([], 1)


def test_a_single_failure_is_a_group_of_one():
    with pytest.raises(hipacm.CompilationError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            mode.submit("group-one-bad", bad_source(9))
            mode.submit("group-one-good", good_source("groupone"))
    assert len(info.value.errors) == 1 and info.value.total == 2
    assert str(info.value).startswith("hipacm: 1 of 2 kernels failed (1 COMPILATION)")


def test_body_exception_wins_and_a_note_counts_the_failures():
    with pytest.raises(KeyError) as info:
        with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
            good, bad = three_of_four(mode)
            raise KeyError("body")
    assert info.value.args == ("body",)
    assert not isinstance(info.value, hipacm.CompilationError)
    if HAS_GROUPS:
        notes = info.value.__notes__
        summary = "hipacm: 3 of 4 kernels failed (3 COMPILATION)"
        assert any(n.startswith(summary) for n in notes), notes
    assert good.result().code[:4] == b"\x7fELF"
    assert all(f.status == hipacm.Status.COMPILATION for f in bad)


def test_a_finalize_exception_still_goes_first_with_the_failures_noted():
    def boom(_kernel):
        raise Boom("finalize")

    with pytest.raises(Boom) as info:
        with hipacm.AsyncCompileMode(1, arch=ARCH) as mode:  # one worker: the finalize fails first
            mode.submit("group-fin", good_source("groupfin"), finalize=boom)
            mode.submit("group-fin-bad", bad_source(7))
    if HAS_GROUPS:
        notes = info.value.__notes__
        assert any(n.startswith("hipacm: 2 of 2 kernels failed (1 FINALIZE_FAILED, 1 COMPILATION)")
                   for n in notes), notes


def test_ignore_errors_raises_nothing():
    with hipacm.AsyncCompileMode(2, arch=ARCH, ignore_errors=True) as mode:
        good, bad = three_of_four(mode)
    assert good.result().code[:4] == b"\x7fELF"
    assert [f.result(ignore_errors=True) for f in bad] == [None, None, None]
