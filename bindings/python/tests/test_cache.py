# SPDX-License-Identifier: MIT
"""cache=: a directory or a policy for the persistent kernel cache, and Kernel.from_cache."""

import pytest

import hipacm
from conftest import ARCH, assert_amdgpu_elf, good_source


def compile_once(cache, name="cached"):
    with hipacm.AsyncCompileMode(1, arch=ARCH, isolation="in-process", cache=cache) as mode:
        future = mode.submit(name, good_source(name))
    return future.result()


def test_a_cache_directory_serves_the_second_mode(tmp_path, monkeypatch):
    monkeypatch.delenv("HIPACM_CACHE", raising=False)
    cold = compile_once(tmp_path)
    assert cold.from_cache is False
    assert (tmp_path / "kernels.sqlite3").is_file()
    hit = compile_once(str(tmp_path))
    assert hit.from_cache is True
    assert hit.code == cold.code
    assert_amdgpu_elf(hit.code)


def test_policy_strings_use_the_default_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPACM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HIPACM_CACHE", "off")  # an explicit policy wins over the environment
    assert compile_once("read", "by_policy").from_cache is False
    assert not (tmp_path / "kernels.sqlite3").exists()
    assert compile_once("readwrite", "by_policy").from_cache is False
    assert compile_once("read", "by_policy").from_cache is True
    assert compile_once("off", "by_policy").from_cache is False


def test_environment_off_still_disables_a_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPACM_CACHE", "off")
    compile_once(tmp_path, "env_off")
    assert not (tmp_path / "kernels.sqlite3").exists()


@pytest.mark.parametrize("cache, error", [(42, TypeError), (b"/tmp/x", TypeError),
                                          ("", ValueError)])
def test_bad_cache_arguments(cache, error):
    with pytest.raises(error, match="cache"):
        hipacm.AsyncCompileMode(cache=cache)


def test_bad_environment_policy_is_refused_at_enter(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPACM_CACHE", "sometimes")
    with pytest.raises(hipacm.InvalidArgumentError, match="HIPACM_CACHE"):
        with hipacm.AsyncCompileMode(arch=ARCH, cache=tmp_path):
            pass  # pragma: no cover
