# SPDX-License-Identifier: MIT
# test_run_clients.py - ordinary hipRTC clients (linked, dlopen, Python ctypes; threaded) give the
# same dump under `hipacm run` as plain: cold, from the cache in a fresh process, and passed
# through, failure logs included; --stats counts what happened.
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import (HIPRTC_SONAME, LINKED, MANIFESTS, OWN_KERNELS, canonical, client_command,
                      run)

STATS = re.compile(r"^hipacm run: (\d+) compiles?: (\d+) cache hits?, (\d+) compiled, (\d+) "
                   r"failed, (\d+) passed through(?: \((.*)\))?$", re.M)

# A few jobs: one of each source, the name expressions and the failure.
SMALL = ["--only", "kernels/", "--only", "MS_OP_ID=2 -DUSE_FWD=1", "--only", "USE_PRNG -DRUN",
         "--only", "MLO_POOLING_OP_ID=1"]
# The repeated runs' jobs, all served from the cache after the first run (hipacm compiles a
# failure again in every process, which would make each of the 50 runs a compile).
REPEATED = ["--only", "templated", "--only", "MS_OP_ID=2 -DUSE_FWD=1", "--only",
            "USE_PRNG -DRUN", "--only", "MLO_POOLING_OP_ID=1"]


def stats_of(stderr):
    found = STATS.findall(stderr)
    assert len(found) == 1, f"no single summary line in:\n{stderr[-3000:]}"
    total, hits, compiled, failed, passed, reasons = found[0]
    return {"compiles": int(total), "hits": int(hits), "compiled": int(compiled),
            "failed": int(failed), "passed_through": int(passed), "reasons": reasons}


def without_failure_logs(dump):
    """The dump less the log lines of failed compiles (which test_failure_logs_match_plain
    compares on their own)."""
    return "\n".join(line for line in dump.splitlines()
                     if not line.startswith(("  | ", "  log_size ", "  log ")))


def run_client(cli, env, kind, *args, stats=True, manifests=MANIFESTS, threads=None):
    extra = ["--threads", str(threads)] if threads else []
    argv = client_command(kind, *extra, *args, manifests=manifests)
    if cli is not None:
        argv = [cli, "run", *(["--stats"] if stats else []), "--", *argv]
    completed = run(argv, env)
    return canonical(completed.stdout), completed.stderr


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The plain linked client's dump of every job (the dlopen one's where it cannot start): the
    reference."""
    from conftest import base_env
    env = base_env(tmp_path_factory.mktemp("plain-cache"))
    dump, _ = run_client(None, env, LINKED)
    assert dump.count("\njob ") == 16 and dump.endswith("jobs 16\n")
    assert "compile HIPRTC_ERROR_COMPILATION(6)" in dump  # kernels/broken.hip
    assert "lowered &blas::axpy<float> HIPRTC_SUCCESS(0) _ZN4blas4axpyIfEEvT_PKS1_PS1_i" in dump
    return dump


def test_plain_dumps_are_stable_and_the_same_for_every_client(plain, env):
    # Another process, another loader: hipRTC gives the same bytes, names and logs (but the
    # comgr directory's random name, which canonical() replaces).
    assert run_client(None, env, "dlopen")[0] == plain
    assert run_client(None, env, "python")[0] == plain


def test_run_cold_then_fresh_processes_match_plain(cli, shim, plain, env):
    cold, cold_err = run_client(cli, env, LINKED)
    assert without_failure_logs(cold) == without_failure_logs(plain)
    assert stats_of(cold_err) == {"compiles": 16, "hits": 0, "compiled": 15, "failed": 1,
                                  "passed_through": 0, "reasons": ""}
    # Fresh processes, each loading hipRTC its own way, are served from the cache.
    for kind in ("dlopen", "python"):
        warm, warm_err = run_client(cli, env, kind)
        assert without_failure_logs(warm) == without_failure_logs(plain), kind
        stats = stats_of(warm_err)
        assert (stats["compiles"], stats["hits"], stats["compiled"]) == (16, 15, 0), kind


def test_threaded_client_never_crashes(cli, shim, env):
    # Plain hipRTC 5.2.3 is not safe when compiles overlap; under hipacm run they go to workers.
    reference, _ = run_client(None, env, "dlopen", *REPEATED)
    jobs = reference.count("\njob ")
    assert jobs == 4
    first, _ = run_client(cli, env, "dlopen", *REPEATED, threads=4)
    assert first == reference
    python, _ = run_client(cli, env, "python", *REPEATED, threads=4)
    assert python == reference
    for attempt in range(50):
        dump, err = run_client(cli, env, LINKED if attempt % 2 else "dlopen", *REPEATED,
                               threads=4)
        assert dump == reference, attempt
        stats = stats_of(err)
        assert (stats["compiles"], stats["hits"]) == (jobs, jobs), attempt
    # And with the failure among them, once.
    with_failure, _ = run_client(None, env, "dlopen", *SMALL)
    served, _ = run_client(cli, env, "dlopen", *SMALL, threads=4)
    assert without_failure_logs(served) == without_failure_logs(with_failure)


def test_passthrough_of_fgpu_rdc_behaves_as_plain(cli, shim, env):
    # -fgpu-rdc is compiled by the real hipRTC in the program's own process: everything equal,
    # the failure's log included; asking for the bitcode too (hipRTC 6 and later have it).
    # hipRTC 6.4's bitcode differs from one plain run to the next (7.2's and 5.2.3's does not):
    # a line that two plain runs disagree on is the library's own noise, and every other line
    # must be equal.
    args = ["--option", "-fgpu-rdc", "--bitcode", *SMALL]
    reference, _ = run_client(None, env, "dlopen", *args)
    again, _ = run_client(None, env, "dlopen", *args)
    served, err = run_client(cli, env, "dlopen", *args)
    plain_lines, again_lines = reference.splitlines(), again.splitlines()
    served_lines = served.splitlines()
    assert len(served_lines) == len(plain_lines) == len(again_lines)
    stable = [i for i, line in enumerate(plain_lines) if line == again_lines[i]]
    assert all(served_lines[i] == plain_lines[i] for i in stable), served
    assert all(" bitcode " in plain_lines[i] for i in range(len(plain_lines)) if i not in stable)
    stats = stats_of(err)
    assert (stats["compiles"], stats["passed_through"]) == (5, 5)
    assert "-fgpu-rdc x5" in stats["reasons"]


# Failures whose logs name more than the source (clients/failing_kernels): headers given with the
# program, one including another from a sub-directory; a warning; lambdas and unnamed structs,
# which clang names by place; and the names again in a message and in source lines, where they
# must stay as they are. (The ROCm matrix compares the same logs under hipRTC 6.4 and 7.2.)
FAILING_KERNELS = Path(__file__).resolve().parent / "clients" / "failing_kernels"


def test_failure_logs_match_plain(cli, shim, env, tmp_path):
    # hipRTC's log names the program's files as its comgr wrote them, under the program's own
    # TMPDIR; served, cold and from the cache, the log is the same but for comgr's six random
    # digits (canonical()), its size included.
    (tmp_path / "program-tmp").mkdir()
    env["TMPDIR"] = str(tmp_path / "program-tmp")
    manifests = [str(FAILING_KERNELS / "manifest.json"), str(OWN_KERNELS)]
    plain, _ = run_client(None, env, LINKED, manifests=manifests)
    assert plain.count("compile HIPRTC_ERROR_COMPILATION(6)") == 3
    assert f"  | In file included from {env['TMPDIR']}/comgr-XXXXXX/input/CompileSource:2:\n" \
        in plain
    assert "/comgr-XXXXXX/include/sub/b.h:3:32: error:" in plain
    cold, cold_err = run_client(cli, env, LINKED, manifests=manifests)
    assert cold == plain
    assert stats_of(cold_err)["failed"] == 3
    for kind in ("dlopen", "python"):
        warm, warm_err = run_client(cli, env, kind, manifests=manifests)
        assert warm == plain, kind
        stats = stats_of(warm_err)
        assert (stats["compiled"], stats["failed"], stats["passed_through"]) == (0, 3, 0), kind


@pytest.mark.parametrize("kind", [LINKED, "python"])
def test_a_program_that_forks_after_compiling_is_served_in_both(cli, shim, env, kind):
    # The child of a served program compiles again, with threads: served, from the cache.
    # (Plain hipRTC 5.2.3 crashes when two threads compile at once: its reference has one.)
    args = ["--fork", "--only", "templated", "--only", "MS_OP_ID=2 -DUSE_FWD=1"]
    reference, _ = run_client(None, env, kind, *args)
    assert reference.count("forked child\n") == 1 and reference.count("jobs 2\n") == 2
    served, err = run_client(cli, env, kind, *args, threads=2)
    assert served == reference
    stats = stats_of(err)
    assert (stats["compiles"], stats["hits"] + stats["compiled"]) == (4, 4)
    assert stats["hits"] >= 2  # the child's, at least


def test_a_program_calling_another_hiprtc_file_passes_through(cli, shim, plain, env, tmp_path):
    # The program loads hipRTC from a file hipacm does not compile with (another ROCm install's,
    # here a copy): another release would give other bytes, so its compiles are its own.
    doctor = json.loads(run([cli, "doctor", "--json"], env).stdout)
    system = Path(next(c for c in doctor["checks"] if c["name"] == "hiprtc")["details"]["path"])
    assert system.is_file(), system
    copy = tmp_path / "rocm-other" / system.name
    copy.parent.mkdir()
    shutil.copyfile(system, copy)
    own = dict(env, HIPACM_HIPRTC_LIBRARY=str(system))
    dump, err = run_client(cli, own, "dlopen", "--library", str(copy), *SMALL)
    reference, _ = run_client(None, env, "dlopen", *SMALL)
    assert dump == reference
    stats = stats_of(err)
    assert stats["passed_through"] == stats["compiles"] > 0, stats
    assert stats["reasons"] == f"another hipRTC x{stats['compiles']}", stats
    # The file hipacm compiles with is served, whichever name the program loads it by.
    dump, err = run_client(cli, own, "dlopen", "--library", str(system), *SMALL)
    assert dump == reference
    assert stats_of(err)["passed_through"] == 0


# A program that destroys a null program, or passes a null pointer: calls on a handle the library
# did not make go to the real library, dlopened here, which answers them as without hipacm.
NULL_HANDLE_SCRIPT = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
program = ctypes.c_void_p()
print("destroy of a null program", lib.hiprtcDestroyProgram(ctypes.byref(program)))
print("destroy of a null pointer", lib.hiprtcDestroyProgram(None))
"""


def test_calls_on_handles_the_library_did_not_make_get_hiprtcs_own_answer(cli, shim, env):
    argv = ["/usr/bin/python3", "-c", NULL_HANDLE_SCRIPT, HIPRTC_SONAME]
    plain = run(argv, env).stdout
    assert plain == "destroy of a null program 0\ndestroy of a null pointer 3\n", plain
    assert run([cli, "run", "--", *argv], env).stdout == plain
