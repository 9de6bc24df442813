# SPDX-License-Identifier: MIT
# test_run_nvrtc.py - ordinary NVRTC clients (C++ linked against libnvrtc, C++ and Python ctypes
# dlopening it by soname) give the same dump under `hipacm run` as plain: cold, from the cache in a
# second process, threaded, and where calls pass through to NVRTC; --stats counts what happened.
import json
import os
from pathlib import Path

import pytest

from conftest import CLIENT_DIR, ROOT, base_env, run, starts_here
from test_run_clients import stats_of

# The ROCm roots of scripts/rocm-matrix.sh have no NVRTC: there the NVRTC clients cannot start.
if not starts_here(CLIENT_DIR / "hipacm_intercept_nvrtc_linked_client"):
    pytest.skip("no NVRTC on this machine: the NVRTC clients cannot start", allow_module_level=True)

JOBS = 9
CLIENTS = ROOT / "tests" / "intercept" / "clients"
MANIFEST = CLIENTS / "nvrtc_kernels" / "manifest.json"


def nvrtc_client(kind):
    """The argv of one client: linked, dlopen or python."""
    if kind == "python":
        return ["/usr/bin/python3", str(CLIENTS / "nvrtc_ctypes_client.py")]
    binary = CLIENT_DIR / f"hipacm_intercept_nvrtc_{kind}_client"
    if not os.access(binary, os.X_OK):
        pytest.fail(f"{binary} is missing: set HIPACM_INTERCEPT_CLIENTS (CTest does)")
    return [str(binary)]


def run_client(cli, env, kind, *args, stats=True):
    argv = [*nvrtc_client(kind), *args, str(MANIFEST)]
    if cli is not None:
        argv = [cli, "run", *(["--stats"] if stats else []), "--", *argv]
    completed = run(argv, env)
    return completed.stdout, completed.stderr


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The plain linked client's dump: the reference."""
    env = base_env(tmp_path_factory.mktemp("plain-cache"))
    dump, _ = run_client(None, env, "linked")
    assert dump.count("\njob ") == JOBS and dump.endswith(f"jobs {JOBS}\n")
    assert "job broken\n  create NVRTC_SUCCESS(0)\n  compile NVRTC_ERROR_COMPILATION(6)" in dump
    assert 'error: identifier "undefined_function" is undefined' in dump
    assert "compile NVRTC_ERROR_INVALID_OPTION(5)" in dump
    assert ("lowered blas::scale<float, 256> NVRTC_SUCCESS(0) _ZN4blas5scaleIfLi256EEEvPT_S1_"
            in dump)
    # NVRTC counts the log's terminating NUL: an empty log is one byte.
    assert "log_size NVRTC_SUCCESS(0) 1\n" in dump
    return dump


@pytest.fixture
def env(tmp_path):
    environment = base_env(tmp_path / "cache")
    # The dlopen client finds NVRTC by soname, as CuPy does where CUDA is on the search path.
    nvrtc_dir = os.environ.get("HIPACM_TEST_NVRTC_DIR", "")
    if nvrtc_dir:
        environment["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (nvrtc_dir, environment.get("LD_LIBRARY_PATH", "")) if p)
    return environment


# Per run: served compiles (5: two CUBINs, two PTX, the name expressions' CUBIN), failures hipacm
# compiled (2: a source error, an unknown option), and what NVRTC compiled in the process: -dlto,
# -lineinfo (its line table names the working directory), and the PTX asked of a program whose
# CUBIN hipacm served.
PASSED = "-dlto x1, line info x1, call after a served compile x1"


def test_plain_dlopen_and_python_clients_match_linked(plain, env):
    assert run_client(None, env, "dlopen")[0] == plain
    assert run_client(None, env, "python")[0] == plain


def test_run_cold_then_second_process_matches_plain(cli, shim, plain, env):
    cold, cold_err = run_client(cli, env, "linked")
    assert cold == plain
    stats = stats_of(cold_err)
    assert stats == {"compiles": 10, "hits": 0, "compiled": 5, "failed": 2,
                     "passed_through": 3, "reasons": stats["reasons"]}
    assert sorted(stats["reasons"].split(", ")) == sorted(PASSED.split(", "))
    warm, warm_err = run_client(cli, env, "linked")
    assert warm == plain
    stats = stats_of(warm_err)
    # Failures are compiled again in every process, as hipacm does for its own requests.
    assert (stats["hits"], stats["compiled"], stats["failed"], stats["passed_through"]) == (
        5, 0, 2, 3)


@pytest.mark.parametrize("kind", ["dlopen", "python"])
def test_dlopening_clients_cold_and_cached_match_plain(cli, shim, plain, env, kind):
    cold, cold_err = run_client(cli, env, kind)
    assert cold == plain
    assert stats_of(cold_err)["compiled"] == 5
    warm, warm_err = run_client(cli, env, kind)
    assert warm == plain
    assert stats_of(warm_err)["hits"] == 5


@pytest.mark.parametrize("kind", ["linked", "python"])
def test_threaded_clients_match_plain(cli, shim, plain, env, kind):
    for _ in range(2):
        dump, err = run_client(cli, env, kind, "--threads", "4")
        assert dump == plain
        assert stats_of(err)["compiles"] == 10


def nvrtc_file_copy(tmp_path, writable_by_others=False):
    """Another file of the NVRTC the linked client uses, in a folder of its own (as a pip wheel's
    NVRTC is beside the system's): a hard link where it can be, so that no 100 MB are copied,
    unless its mode is to change."""
    nvrtc_dir = Path(os.environ.get("HIPACM_TEST_NVRTC_DIR", "/usr/local/cuda/lib64"))
    source = nvrtc_dir / "libnvrtc.so.13"
    if not source.exists():
        source = nvrtc_dir / "libnvrtc.so.12"
    if not source.exists():
        pytest.skip("no libnvrtc.so.13 or .12 beside the linked library")
    copy = tmp_path / "lib" / source.name
    copy.parent.mkdir()
    try:
        if writable_by_others:
            raise OSError("a copy, whose mode is its own")
        os.link(source.resolve(), copy)
    except OSError:
        copy.write_bytes(source.resolve().read_bytes())
    if writable_by_others:
        copy.chmod(0o777)
    return copy


def test_a_libnvrtc_that_is_not_hipacms_is_served_with_that_library(cli, shim, plain, env,
                                                                     tmp_path):
    # The program's NVRTC is another file than the one hipacm finds by itself: its compiles are
    # served by a worker that loads the program's file, cold and from the cache.
    copy = nvrtc_file_copy(tmp_path)
    dump, err = run_client(cli, env, "dlopen", "--library", str(copy))
    assert dump == plain
    stats = stats_of(err)
    assert (stats["compiles"], stats["compiled"], stats["failed"]) == (10, 5, 2), stats
    assert sorted(stats["reasons"].split(", ")) == sorted(PASSED.split(", "))
    dump, err = run_client(cli, env, "dlopen", "--library", str(copy))
    assert dump == plain
    assert stats_of(err)["hits"] == 5
    # The system's NVRTC makes other cache keys: its first run compiles.
    dump, err = run_client(cli, env, "dlopen")
    assert dump == plain
    assert (stats_of(err)["hits"], stats_of(err)["compiled"]) == (0, 5)


def test_served_where_hipacm_finds_no_nvrtc_of_its_own(cli, shim, plain, env, tmp_path):
    # hipacm's own NVRTC search finds nothing (a pip wheel's NVRTC on a machine without CUDA): the
    # program's NVRTC compiles and judges the arch, so its compiles are served all the same.
    copy = nvrtc_file_copy(tmp_path)
    env = dict(env, HIPACM_NVRTC_LIBRARY=str(tmp_path / "missing" / "libnvrtc.so.13"))
    dump, err = run_client(cli, env, "dlopen", "--library", str(copy))
    assert dump == plain
    stats = stats_of(err)
    assert (stats["compiles"], stats["compiled"], stats["failed"]) == (10, 5, 2), stats
    dump, err = run_client(cli, env, "dlopen", "--library", str(copy))
    assert dump == plain
    assert stats_of(err)["hits"] == 5


def test_an_nvrtc_file_others_can_change_passes_through(cli, shim, plain, env, tmp_path):
    # A worker would run code that another user can replace: NVRTC compiles in the program.
    copy = nvrtc_file_copy(tmp_path, writable_by_others=True)
    dump, err = run_client(cli, env, "dlopen", "--library", str(copy))
    assert dump == plain
    stats = stats_of(err)
    assert (stats["hits"], stats["compiled"], stats["failed"]) == (0, 0, 0)
    assert stats["passed_through"] == stats["compiles"]
    assert "another NVRTC" in stats["reasons"]


def test_programs_without_a_name_are_served_as_default_program(cli, shim, env, tmp_path):
    # NVRTC calls a program created with a null name "default_program" (PyTorch's jiterator makes
    # its programs so): served, its failure log names it as NVRTC does.
    for name in ("saxpy.cu", "broken.cu"):
        (tmp_path / name).write_text((CLIENTS / "nvrtc_kernels" / name).read_text())
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"jobs": [
        {"name": "unnamed", "source": "saxpy.cu", "unnamed": True, "options": ["-arch=sm_90"],
         "outputs": ["cubin"]},
        {"name": "unnamed broken", "source": "broken.cu", "unnamed": True,
         "options": ["-arch=sm_90"], "outputs": ["cubin"]}]}))
    for kind in ("linked", "python"):
        client = nvrtc_client(kind)
        plain = run([*client, str(manifest)], env).stdout
        assert "compile NVRTC_SUCCESS(0)" in plain and "default_program(" in plain, plain
        served = run([cli, "run", "--stats", "--", *client, str(manifest)], env)
        assert served.stdout == plain
        stats = stats_of(served.stderr)
        assert (stats["passed_through"], stats["failed"]) == (0, 1), stats
        assert stats["compiled"] + stats["hits"] == 1, stats


def test_empty_programs_are_served(cli, shim, env, tmp_path):
    # NVRTC compiles an empty source (CuPy compiles one to probe NVRTC): so does hipacm, for a
    # CUDA program's own compile.
    (tmp_path / "empty.cu").write_text("")
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"jobs": [
        {"name": "empty", "source": "empty.cu", "options": ["-arch=sm_90"], "outputs": ["cubin"]},
        {"name": "empty ptx", "source": "empty.cu", "options": ["-arch=compute_90"],
         "outputs": ["ptx"]}]}))
    client = nvrtc_client("linked")
    plain = run([*client, str(manifest)], env).stdout
    assert plain.count("compile NVRTC_SUCCESS(0)") == 2, plain
    for want in ("compiled", "hits"):
        served = run([cli, "run", "--stats", "--", *client, str(manifest)], env)
        assert served.stdout == plain
        assert stats_of(served.stderr)[want] == 2, served.stderr


def test_programs_named_by_temporary_paths_share_the_cache(cli, shim, env, tmp_path):
    # CuPy names each program by the path of a fresh temporary file: compiled under the file's
    # name alone, two processes share an entry, and the log names the path each program gave.
    for name in ("saxpy.cu", "broken.cu"):
        (tmp_path / name).write_text((CLIENTS / "nvrtc_kernels" / name).read_text())
    (tmp_path / "asserts.cu").write_text(
        '#include <assert.h>\nextern "C" __global__ void k(int* p) { assert(p); p[0] = 1; }\n')
    client = nvrtc_client("python")

    def manifest_for(directory):
        path = tmp_path / f"{Path(directory).name}.json"
        path.write_text(json.dumps({"jobs": [
            {"name": "saxpy", "source": "saxpy.cu", "program_name": f"{directory}/kern.cu",
             "options": ["-arch=sm_90"], "outputs": ["cubin"]},
            {"name": "broken", "source": "broken.cu", "program_name": f"{directory}/kern.cu",
             "options": ["-arch=sm_90"], "outputs": ["cubin"]},
            # assert's message holds the program's name: its code is the name's own.
            {"name": "asserts", "source": "asserts.cu", "program_name": f"{directory}/kern.cu",
             "options": ["-arch=sm_90"], "outputs": ["cubin"]}]}))
        return path

    counts = []
    for directory in ("/tmp/tmpaaaa1111", "/tmp/tmpbbbb2222"):
        manifest = manifest_for(directory)
        plain = run([*client, str(manifest)], env).stdout
        assert f"{directory}/kern.cu(" in plain and f'compilation of "{directory}/kern.cu"' in plain
        served = run([cli, "run", "--stats", "--", *client, str(manifest)], env)
        assert served.stdout == plain
        stats = stats_of(served.stderr)
        counts.append((stats["compiled"], stats["hits"], stats["failed"], stats["passed_through"]))
        assert stats["reasons"] == "file name x1", stats
    assert counts == [(1, 0, 1, 1), (0, 1, 1, 1)]


def test_nvrtc_12_programs_match_plain(cli, shim, env):
    # The same clients on NVRTC 12 (the system's is 13): served with NVRTC 12 itself, cold and
    # from the cache, with the same dump as plain.
    nvrtc12 = Path(os.environ.get("HIPACM_TEST_NVRTC12_DIR", ""))
    if not (nvrtc12 / "libnvrtc.so.12").exists():
        pytest.skip(f"no libnvrtc.so.12 in '{nvrtc12}': scripts/nvrtc12.sh fetches it")
    env12 = dict(env, LD_LIBRARY_PATH=os.pathsep.join(
        p for p in (str(nvrtc12), env.get("LD_LIBRARY_PATH", "")) if p))
    for kind in ("dlopen", "python"):
        plain, _ = run_client(None, env12, kind, "--library", "libnvrtc.so.12")
        assert plain.startswith("nvrtc 12."), plain[:40]
        assert "compile NVRTC_ERROR_COMPILATION(6)" in plain
        dump, err = run_client(cli, env12, kind, "--library", "libnvrtc.so.12")
        assert dump == plain
        # Served, the program with no arch option included: it is filed under NVRTC 12's lowest
        # arch (compute_50), which NVRTC 12 judges, not hipacm's own NVRTC 13 (which lacks it).
        cold = stats_of(err)
        assert (cold["compiles"], cold["failed"]) == (10, 2), cold
        assert cold["compiled"] + cold["hits"] == 5, cold
        dump, err = run_client(cli, env12, kind, "--library", "libnvrtc.so.12")
        assert dump == plain
        assert stats_of(err)["hits"] == 5


def test_recorded_run_warms_another_cache(cli, shim, plain, env, tmp_path):
    # Record the served compiles of one run, warm a fresh cache from the record with hipacm
    # warmup, and a run against that cache is served from it.
    record = tmp_path / "app.jsonl"
    recording = dict(env, HIPACM_RECORD=str(record))
    dump, _ = run_client(cli, recording, "dlopen")
    assert dump == plain
    assert len(record.read_text().splitlines()) == 7  # the 5 served and the 2 failures
    warmed = dict(env, HIPACM_CACHE_DIR=str(tmp_path / "warmed"))
    warmup = run([cli, "warmup", str(record)], warmed, check=False)
    # The two failures fail again (exit 1); the rest is compiled into the cache.
    assert warmup.returncode == 1, warmup.stderr
    assert "FAILED" in warmup.stderr and "NVRTC_ERROR_INVALID_OPTION" in warmup.stderr
    served, err = run_client(cli, warmed, "dlopen")
    assert served == plain
    assert stats_of(err)["hits"] == 5


def test_files_found_from_the_working_directory_pass_through(cli, shim, env, tmp_path):
    # NVRTC finds a quoted #include beside the program's name (here: the working directory), and
    # a relative -I from it too; a worker compiles elsewhere, so both are NVRTC's own, in process.
    (tmp_path / "local.h").write_text("#define LOCAL_VALUE 7\n")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "value.h").write_text("#define INC_VALUE 9\n")
    (tmp_path / "local.cu").write_text(
        '#include "local.h"\nextern "C" __global__ void k(int* p) { p[0] = LOCAL_VALUE; }\n')
    (tmp_path / "inc.cu").write_text(
        '#include <value.h>\nextern "C" __global__ void k(int* p) { p[0] = INC_VALUE; }\n')
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"jobs": [
        {"name": "local", "source": "local.cu", "options": ["-arch=sm_90"], "outputs": ["cubin"]},
        {"name": "inc", "source": "inc.cu", "options": ["-arch=sm_90", "-Iinc"],
         "outputs": ["cubin"]}]}))
    client = nvrtc_client("python")
    plain = run([*client, str(manifest)], env, cwd=tmp_path).stdout
    assert plain.count("compile NVRTC_SUCCESS(0)") == 2, plain
    served = run([cli, "run", "--stats", "--", *client, str(manifest)], env, cwd=tmp_path)
    assert served.stdout == plain
    stats = stats_of(served.stderr)
    assert stats["passed_through"] == 2
    assert sorted(stats["reasons"].split(", ")) == ["relative path x1",
                                                     "working directory include x1"]


# Calls on a handle the library did not make go to the real NVRTC, which answers them as without
# hipacm (the shim once answered a null program's destroy itself, with another status).
NULL_HANDLE_SCRIPT = """
import ctypes
lib = ctypes.CDLL("libnvrtc.so.13")
program = ctypes.c_void_p()
print("destroy of a null program", lib.nvrtcDestroyProgram(ctypes.byref(program)))
print("destroy of a null pointer", lib.nvrtcDestroyProgram(None))
print("compile of a null program", lib.nvrtcCompileProgram(None, 0, None))
"""


def test_calls_on_handles_the_library_did_not_make_get_nvrtcs_own_answer(cli, shim, env):
    argv = ["/usr/bin/python3", "-c", NULL_HANDLE_SCRIPT]
    plain = run(argv, env).stdout
    assert plain == ("destroy of a null program 4\ndestroy of a null pointer 4\n"
                     "compile of a null program 4\n"), plain
    assert run([cli, "run", "--", *argv], env).stdout == plain
