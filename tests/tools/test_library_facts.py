# SPDX-License-Identifier: MIT
# test_library_facts.py - a fully cached warm-up loads neither comgr nor hipRTC, and anything that
# could change which library dlopen picks makes the next run load it again.
import json
import os
import re
import shutil

import pytest

import rocm_facts
from conftest import EXAMPLES

COMGR = rocm_facts.COMGR_LIBRARY
HIPRTC = rocm_facts.HIPRTC_LIBRARIES
# LD_DEBUG=files prints one such line for every library the process maps (a dlopen that
# only finds the library already loaded, or not at all, prints none).
DLOPENED = re.compile(r"file=(\S+) \[\d+\];\s+generating link map")


def dlopened(stderr):
    return {os.path.basename(name) for name in DLOPENED.findall(stderr)}


def loads(names, library):
    return any(name.startswith(library) for name in names)


@pytest.fixture
def warm(run, backend_usable):
    """warm(*extra, env=None) runs one cached-able warm-up with LD_DEBUG=files; returns
    (result, dlopened names, the JSON report)."""

    def _warm(*extra, env=None):
        full_env = {"LD_DEBUG": "files"}
        full_env.update(env or {})
        r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--json", "-", "-q", *extra,
                env=full_env)
        report = json.loads(r.out) if r.rc == 0 else None
        return r, dlopened(r.err), report

    return _warm


def comgr_path(run):
    doc = run("doctor", "--json").json()
    (comgr,) = [c for c in doc["checks"] if c["name"] == "comgr"]
    return os.path.realpath(comgr["details"]["path"])


def test_second_run_loads_no_compiler_library(warm):
    r, names, report = warm()
    assert r.rc == 0, r.err[-2000:]
    assert report["totals"]["compiled"] == 1
    assert loads(names, COMGR) and loads(names, HIPRTC)

    r, names, report = warm()
    assert r.rc == 0, r.err[-2000:]
    assert report["totals"]["cache_hits"] == 1
    assert not loads(names, COMGR), sorted(names)
    assert not loads(names, HIPRTC), sorted(names)


def test_unknown_arch_is_refused_from_the_remembered_list(warm, run):
    arch = rocm_facts.unknown_processor(rocm_facts.comgr_processors(comgr_path(run)))
    assert warm()[0].rc == 0
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", arch, env={"LD_DEBUG": "files"})
    assert r.rc == 2
    assert f"unknown processor '{arch}'" in r.err
    assert "gfx90a" in r.err  # the supported list comes from the remembered table
    assert not loads(dlopened(r.err), COMGR)


def test_cache_off_remembers_the_facts_in_the_runtime_directory(warm, cache_dir, tmp_path):
    # Without a cache the host still checks its arch at mode enter; the runtime directory keeps
    # what that needs, so only the first run loads comgr into the host (its workers compile).
    env = {"HIPACM_CACHE": "off", "HIPACM_RUNTIME_DIR": str(tmp_path / "run")}
    r, names, report = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    assert report["totals"]["compiled"] == 1
    assert loads(names, COMGR)
    facts = list((tmp_path / "run" / "facts").iterdir())
    assert facts and all(f.stat().st_mode & 0o077 == 0 for f in facts)
    r, names, report = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    assert report["totals"]["compiled"] == 1, "compiled again: the cache stays off"
    assert not loads(names, COMGR), sorted(names)
    assert not loads(names, HIPRTC), sorted(names)
    assert not cache_dir.exists() or not any(cache_dir.iterdir()), "nothing written to the cache"


def test_a_runtime_fact_that_lies_is_not_believed(warm, tmp_path):
    env = {"HIPACM_CACHE": "off", "HIPACM_RUNTIME_DIR": str(tmp_path / "run")}
    assert warm(env=env)[0].rc == 0
    # Every remembered fact now claims another key's record, is cut short, or is garbage: each
    # is read from the library again, and the run still succeeds.
    for n, fact in enumerate(sorted((tmp_path / "run" / "facts").iterdir())):
        data = fact.read_bytes()
        fact.write_bytes([data[: len(data) // 2], b"hipacm-fact-1 3\nkeyvalue", b"\0" * 64][n % 3])
    r, names, _ = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    assert loads(names, COMGR), sorted(names)


def test_a_runtime_directory_others_can_write_is_not_used(warm, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    run_dir.chmod(0o777)
    env = {"HIPACM_CACHE": "off", "HIPACM_RUNTIME_DIR": str(run_dir)}
    for _ in range(2):
        r, names, _ = warm(env=env)
        assert r.rc == 0, r.err[-2000:]
        assert loads(names, COMGR), "nothing is recalled from a directory others can write"
    assert not (run_dir / "facts").exists()


def test_a_library_added_to_the_search_path_is_noticed(warm, run, tmp_path):
    libdir = tmp_path / "libdir"
    libdir.mkdir()
    # First on the path; whatever the path held stays behind it.
    env = {"LD_LIBRARY_PATH": os.pathsep.join(
        filter(None, [str(libdir), os.environ.get("LD_LIBRARY_PATH")]))}
    r, names, _ = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    soname = rocm_facts.requested(names, COMGR)  # libamd_comgr.so.2 in ROCm 5, .so.3 in 6 and 7
    r, names, _ = warm(env=env)
    assert r.rc == 0 and not loads(names, COMGR)

    # A comgr that dlopen would now find first: it must be the one read.
    os.symlink(comgr_path(run), libdir / soname)
    r, names, report = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    assert loads(names, COMGR)
    assert f"calling init: {libdir}/{soname}" in r.err
    assert report["totals"]["cache_hits"] == 1  # hipRTC is unchanged, so is every key


def test_a_changed_library_file_is_noticed(warm, run, tmp_path):
    copy = tmp_path / "libamd_comgr.so.2"
    shutil.copyfile(comgr_path(run), copy)
    env = {"HIPACM_COMGR_LIBRARY": str(copy)}
    assert warm(env=env)[0].rc == 0
    r, names, _ = warm(env=env)
    assert r.rc == 0 and not loads(names, COMGR)

    stat = copy.stat()
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    r, names, _ = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    assert loads(names, COMGR)


def test_a_repointed_link_is_noticed(warm, run, tmp_path):
    first = tmp_path / "a" / "libamd_comgr.so.2"
    second = tmp_path / "b" / "libamd_comgr.so.2"
    for path in (first, second):
        path.parent.mkdir()
        shutil.copyfile(comgr_path(run), path)
    link = tmp_path / "libamd_comgr.so"
    os.symlink(first, link)
    env = {"HIPACM_COMGR_LIBRARY": str(link)}
    assert warm(env=env)[0].rc == 0
    assert not loads(warm(env=env)[1], COMGR)

    link.unlink()
    os.symlink(second, link)  # the remembered file is still there, unchanged
    r, names, _ = warm(env=env)
    assert r.rc == 0, r.err[-2000:]
    # The remembered table no longer holds: comgr is loaded and read again (where hipRTC already
    # mapped the same library, that one is read rather than a second copy).
    assert loads(names, COMGR)


def test_a_missing_hiprtc_is_noticed_after_a_warm_run(warm, run, tmp_path):
    assert warm()[0].rc == 0
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a",
            env={"HIPACM_HIPRTC_LIBRARY": str(tmp_path / "libmissing.so")})
    assert r.rc == 3
    assert "needs hipRTC" in r.err


def test_cache_clear_forgets_the_facts(warm, run):
    assert warm()[0].rc == 0
    assert not loads(warm()[1], COMGR)
    assert run("cache", "clear").rc == 0
    r, names, report = warm()
    assert r.rc == 0, r.err[-2000:]
    assert report["totals"]["compiled"] == 1
    assert loads(names, COMGR)


needs_nvrtc = pytest.mark.skipif(not rocm_facts.nvrtc_loadable(), reason="no NVRTC here")


@needs_nvrtc
def test_a_cached_nvidia_warmup_loads_no_nvrtc(run, backend_usable):
    def warm(arch):
        r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", arch, "--json", "-", "-q",
                env={"LD_DEBUG": "files"})
        return r, dlopened(r.err)

    r, names = warm("sm_90")
    assert r.rc == 0, r.err[-2000:]
    assert loads(names, "libnvrtc.so")
    r, names = warm("sm_90")
    assert r.rc == 0, r.err[-2000:]
    assert json.loads(r.out)["totals"]["cache_hits"] == 1
    assert not loads(names, "libnvrtc.so"), sorted(names)
    # An arch NVRTC does not have is refused from the remembered list, which the message names.
    r, names = warm("sm_1")
    assert r.rc == 2
    assert "unknown NVIDIA arch 'sm_1'" in r.err and "sm_90" in r.err
    assert not loads(names, "libnvrtc.so"), sorted(names)
