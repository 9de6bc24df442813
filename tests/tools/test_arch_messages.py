# SPDX-License-Identifier: MIT
# test_arch_messages.py - what a refused arch says through hipacm_mode_enter, as every host sees
# it: the nearest processors for a typo, and for a real processor this ROCm lacks, the first
# release that lists it and how to point hipacm at one.
import os

import pytest

import rocm_facts
from conftest import EXAMPLES


@pytest.fixture
def listed(run, backend_usable):
    doc = run("doctor", "--json").json()
    (comgr,) = [c for c in doc["checks"] if c["name"] == "comgr"]
    return rocm_facts.comgr_processors(os.path.realpath(comgr["details"]["path"]))


def refusal(run, arch):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", arch)
    assert r.rc == 2, r.err
    assert f"hipacm_mode_enter: invalid AMDGPU arch '{arch}'" in r.err, r.err
    return r.err


@pytest.mark.parametrize("typo,meant", [("gfx9a0", "gfx90a"), ("gfx90a0", "gfx90a"),
                                        ("gfx1300", "gfx1030")])
def test_a_mistyped_processor_gets_the_one_it_resembles(run, listed, typo, meant):
    if meant not in listed:
        pytest.skip(f"this comgr lists no {meant}")
    error = refusal(run, typo)
    assert f"unknown processor '{typo}' (this hipRTC would abort on it); did you mean " in error
    suggested = error.split("did you mean ", 1)[1].split("?", 1)[0]
    assert meant in suggested.replace(" or ", ", ").split(", "), error


def test_a_name_like_no_processor_gets_no_suggestion(run, listed):
    error = refusal(run, "gfx9999z")
    assert "did you mean" not in error


def test_a_processor_a_newer_rocm_knows_says_how_to_use_that_rocm(run, listed):
    later = [name for name in rocm_facts.unlisted_real_processors(listed)
             if name not in ("gfx940", "gfx941")]  # removed from LLVM: no release helps
    if not later:
        pytest.skip("this comgr lists every processor the releases checked know")
    error = refusal(run, later[0])
    assert f"{later[0]}" in error and "is not known to this ROCm" in error
    assert "is the first whose comgr lists it; to compile for it, point hipacm at ROCm " in error
    assert "set HIPACM_HIPRTC_LIBRARY to its hipRTC" in error
    assert "or ROCM_PATH to its install tree" in error
    assert "did you mean" not in error
