# SPDX-License-Identifier: MIT
"""ABI 1.4 from Python: hipacm.stats(), cache_failures, and a plugin that predates them."""

import ctypes
import dataclasses

import pytest

import hipacm
from hipacm import _core, _ffi
from conftest import SHIM_CC, run_with_shim_plugin, ARCH, STATIC_ASSERT_SOURCE, good_source


def test_get_stats_fills_every_field_of_the_struct():
    raw = _ffi.Stats()
    ctypes.memset(ctypes.byref(raw), 0xFF, ctypes.sizeof(raw))
    raw.struct_size = ctypes.sizeof(raw)
    assert _core._api.get_stats(ctypes.byref(raw)) == hipacm.Status.SUCCESS
    assert raw.struct_size == ctypes.sizeof(raw)
    unset = [name for name, _ in _ffi.Stats._fields_[1:] if getattr(raw, name) == 2**64 - 1]
    assert unset == []
    raw.struct_size = 4  # below version 1
    assert _core._api.get_stats(ctypes.byref(raw)) == hipacm.Status.ABI_MISMATCH


def test_stats_is_a_snapshot_of_every_counter_and_never_decreases():
    before = hipacm.stats()
    names = [f.name for f in dataclasses.fields(hipacm.Stats)]
    assert names == ["compiles", "compile_failures", "cache_hits", "cache_misses",
                     "cache_stores", "bytes_stored", "cache_evictions", "bytes_evicted",
                     "worker_spawns", "worker_crashes", "timeouts", "cached_failures",
                     "remote_hits", "remote_misses", "remote_refused", "remote_stores",
                     "remote_duplicates", "remote_store_failures", "remote_errors",
                     "remote_waits"]
    assert all(isinstance(getattr(before, n), int) and getattr(before, n) >= 0 for n in names)
    hipacm.compile(good_source("counted"), arch=ARCH)
    with pytest.raises(hipacm.CompilationError):
        hipacm.compile(STATIC_ASSERT_SOURCE, arch=ARCH)
    after = hipacm.stats()
    assert all(getattr(after, n) >= getattr(before, n) for n in names), (before, after)
    # Tests run one at a time in this process: exactly these two compiles ran.
    assert after.compiles == before.compiles + 2, (before, after)
    assert after.compile_failures == before.compile_failures + 1, (before, after)


def test_cache_failures_serves_a_stored_failure_without_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPACM_CACHE", "readwrite")
    errors = []
    counters = [hipacm.stats()]
    for _ in range(2):
        with hipacm.AsyncCompileMode(arch=ARCH, cache=tmp_path, cache_failures=True,
                                     ignore_errors=True) as mode:
            future = mode.submit("negative", STATIC_ASSERT_SOURCE)
        with pytest.raises(hipacm.CompilationError) as info:
            future.result()
        errors.append(info.value)
        counters.append(hipacm.stats())
    first, second = errors
    assert first.status == second.status == hipacm.Status.COMPILATION
    assert "X must be 2" in first.log and second.log == first.log
    before, after_first, after_second = counters
    assert after_first.compiles == before.compiles + 1  # compiled, failed, stored
    assert after_second.compiles == after_first.compiles  # served from the cache
    assert after_second.cached_failures == after_first.cached_failures + 1
    mode = hipacm.AsyncCompileMode(cache_failures=True)
    assert mode.cache_failures and "cache_failures=True" in repr(mode)


# A plugin of ABI 1.3: the real one behind a provider table cut at version 2.
OLD_PLUGIN = r"""
#include <hipacm/hipacm.h>
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
static hipacm_provider table;
const hipacm_provider* hipacm_get_provider(uint32_t abi) {
  if (HIPACM_ABI_VERSION_MAJOR_OF(abi) != 1 || HIPACM_ABI_VERSION_MINOR_OF(abi) == 0) return NULL;
  void* real = dlopen(REAL, RTLD_NOW | RTLD_LOCAL);
  if (!real) return NULL;
  hipacm_get_provider_fn get = (hipacm_get_provider_fn)dlsym(real, "hipacm_get_provider");
  const hipacm_provider* p = get(HIPACM_ABI_VERSION_ENCODE(1, 3));
  memcpy(&table, p, offsetof(hipacm_provider, set_log_callback));
  table.struct_size = offsetof(hipacm_provider, set_log_callback);
  table.abi_version = HIPACM_ABI_VERSION_ENCODE(1, 3);
  return &table;
}
"""

OLD_PLUGIN_SCRIPT = r"""
import hipacm
print("logging", hipacm._logging.registered_level())
for call in (hipacm.stats, lambda: hipacm.AsyncCompileMode(cache_failures=True)):
    try:
        call()
    except hipacm.AbiMismatchError as exc:
        print("refused", exc.status.name, exc.message)
with hipacm.AsyncCompileMode(arch="gfx90a") as mode:
    future = mode.submit(None, 'extern "C" __global__ void k(int* p) { *p = 1; }')
print("ELF", future.result().code[:4] == b"\x7fELF")
"""


@pytest.mark.skipif(SHIM_CC is None, reason="no C compiler")
def test_a_plugin_before_abi_1_4_loads_and_refuses_only_the_new_calls(tmp_path):
    lines = run_with_shim_plugin(tmp_path, OLD_PLUGIN, OLD_PLUGIN_SCRIPT)
    assert lines[0] == "logging None"  # no callback to register: events stay on stderr
    refusals = [line for line in lines if line.startswith("refused ABI_MISMATCH ")]
    assert len(refusals) == 2, lines
    assert all("ABI 1.4" in line and "provides ABI 1.3" in line for line in refusals), lines
    assert lines[-1] == "ELF True"
