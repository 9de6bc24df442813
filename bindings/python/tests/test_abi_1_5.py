# SPDX-License-Identifier: MIT
"""ABI 1.5 from Python: remote_cache=, the remote counters, and a 1.4 plugin."""

import ctypes

import pytest

import hipacm
from hipacm import _core, _ffi
from conftest import SHIM_CC, run_with_shim_plugin, ARCH


def test_get_stats_fills_version_1_only_for_a_1_4_sized_struct():
    raw = _ffi.Stats()
    ctypes.memset(ctypes.byref(raw), 0xFF, ctypes.sizeof(raw))
    raw.struct_size = _ffi.Stats.remote_hits.offset
    assert _core._api.get_stats(ctypes.byref(raw)) == hipacm.Status.SUCCESS
    assert raw.cached_failures != 2**64 - 1
    remote = [name for name, _ in _ffi.Stats._fields_[13:]]
    assert [getattr(raw, name) for name in remote] == [2**64 - 1] * 8  # never written


def test_init_sets_no_remote_cache():
    cfg = _ffi.ModeConfig()
    ctypes.memset(ctypes.byref(cfg), 0xA5, ctypes.sizeof(cfg))
    _core._api.mode_config_init_sized(ctypes.byref(cfg), ctypes.sizeof(cfg))
    assert cfg.struct_size == ctypes.sizeof(cfg)
    assert cfg.remote_cache is None


@pytest.mark.parametrize("url,why", [("redis://host:99999", "port"), ("http://x", "scheme")])
def test_a_malformed_remote_cache_fails_enter_and_frees_the_slot(tmp_path, monkeypatch, url,
                                                                  why):
    monkeypatch.setenv("HIPACM_CACHE", "read")  # the remote tier is used only with a cache
    mode = hipacm.AsyncCompileMode(arch=ARCH, cache=tmp_path, remote_cache=url)
    with pytest.raises(hipacm.InvalidArgumentError) as info:
        mode.__enter__()
    assert info.value.status == hipacm.Status.INVALID_ARGUMENT
    assert "remote_cache" in info.value.message and why in info.value.message
    assert not mode.active
    assert hipacm.active_mode() is None
    assert _core._api.active_mode() is None  # the plugin's slot is free too


def test_remote_cache_off_enters(tmp_path, monkeypatch):
    # "off" wins over the environment's URL, malformed here so that reading it would fail.
    monkeypatch.setenv("HIPACM_REMOTE_CACHE", "http://not-redis")
    monkeypatch.setenv("HIPACM_CACHE", "read")
    with hipacm.AsyncCompileMode(arch=ARCH, cache=tmp_path, remote_cache="off") as mode:
        assert mode.active
    monkeypatch.setenv("HIPACM_REMOTE_CACHE", "redis://host:0")
    with pytest.raises(hipacm.InvalidArgumentError) as info:
        hipacm.AsyncCompileMode(arch=ARCH, cache=tmp_path).__enter__()
    assert "HIPACM_REMOTE_CACHE" in info.value.message


def test_remote_cache_argument_checks_and_repr():
    with pytest.raises(TypeError):
        hipacm.AsyncCompileMode(remote_cache=b"redis://h")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        hipacm.AsyncCompileMode(remote_cache="")
    with pytest.raises(ValueError):
        hipacm.AsyncCompileMode(remote_cache="redis://h\0")
    mode = hipacm.AsyncCompileMode(remote_cache="redis://ci:secret@cache.example:6379/2")
    assert "secret" not in repr(mode) and "ci:" not in repr(mode)
    assert "remote_cache='redis://***@cache.example:6379/2'" in repr(mode)
    assert "remote_cache='off'" in repr(hipacm.AsyncCompileMode(remote_cache="off"))


# A plugin of ABI 1.4: the real one behind the 1.4 table, which says it granted 1.4.
PLUGIN_1_4 = r"""
#include <hipacm/hipacm.h>
#include <dlfcn.h>
#include <string.h>
static hipacm_provider table;
const hipacm_provider* hipacm_get_provider(uint32_t abi) {
  if (HIPACM_ABI_VERSION_MAJOR_OF(abi) != 1 || HIPACM_ABI_VERSION_MINOR_OF(abi) == 0) return NULL;
  void* real = dlopen(REAL, RTLD_NOW | RTLD_LOCAL);
  if (!real) return NULL;
  hipacm_get_provider_fn get = (hipacm_get_provider_fn)dlsym(real, "hipacm_get_provider");
  memcpy(&table, get(HIPACM_ABI_VERSION_ENCODE(1, 4)), sizeof table);
  return &table;
}
"""

PLUGIN_1_4_SCRIPT = r"""
import hipacm
print("abi", hipacm._core._plugin.abi_text, hipacm._core._plugin.has_abi_1_5)
try:
    hipacm.AsyncCompileMode(remote_cache="redis://127.0.0.1:6390")
except hipacm.AbiMismatchError as exc:
    print("refused", exc.status.name, exc.message)
stats = hipacm.stats()
print("remote", stats.remote_hits, stats.remote_waits)
with hipacm.AsyncCompileMode(arch="gfx90a", remote_cache="off") as mode:
    future = mode.submit(None, 'extern "C" __global__ void k(int* p) { *p = 1; }')
print("ELF", future.result().code[:4] == b"\x7fELF")
"""


@pytest.mark.skipif(SHIM_CC is None, reason="no C compiler")
def test_a_1_4_plugin_works_and_refuses_remote_cache(tmp_path):
    lines = run_with_shim_plugin(tmp_path, PLUGIN_1_4, PLUGIN_1_4_SCRIPT)
    assert lines[0] == "abi 1.4 False", lines
    assert lines[1].startswith("refused ABI_MISMATCH "), lines
    assert "remote_cache=" in lines[1] and "ABI 1.5" in lines[1] and "provides ABI 1.4" in lines[1]
    assert lines[2] == "remote 0 0", lines
    assert lines[-1] == "ELF True", lines
