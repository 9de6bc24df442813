# SPDX-License-Identifier: MIT
"""Many submits with lambda callbacks and collections in between: the plugin
must only ever call callbacks that are alive, each exactly once, and every
registry entry must be released once its callbacks can no longer run."""

import gc
import weakref

import pytest

import hipacm
from hipacm import _callbacks
from conftest import ARCH, STATIC_ASSERT_SOURCE, good_source

ROUNDS = 3
SUBMITS = 90


class Token:
    """One per submit; captured by its lambdas, so its lifetime is theirs."""


def test_gc_stress_counts_are_exact_and_nothing_leaks():
    for rnd in range(ROUNDS):
        counts = {"finalize": 0, "cleanup": 0}
        tokens = []
        with pytest.raises(hipacm.CompilationError) as info:
            with hipacm.AsyncCompileMode(2, arch=ARCH) as mode:
                for i in range(SUBMITS):
                    kind = i % 3  # two good keys, one bad key, each submitted 30 times
                    source = STATIC_ASSERT_SOURCE if kind == 2 else good_source(f"k{kind}")
                    token = Token()
                    tokens.append(weakref.ref(token))

                    def bump(which, _arg, token=token):
                        assert isinstance(token, Token)
                        counts[which] += 1

                    future = mode.submit(
                        f"gc-{rnd}-{kind}", source,
                        finalize=lambda k, bump=bump: bump("finalize", k),
                        cleanup=lambda e, bump=bump: bump("cleanup", e))
                    del future, token, bump
                    if i % 7 == 0:
                        gc.collect()
                gc.collect()  # between the last submit and the exit
                assert _callbacks._live_callback_entries() == SUBMITS
        assert info.value.key == f"gc-{rnd}-2"
        gc.collect()
        assert counts == {"finalize": 2, "cleanup": 1}, counts
        assert _callbacks._live_callback_entries() == 0
        assert all(ref() is None for ref in tokens), "callbacks kept alive after exit"
