# SPDX-License-Identifier: MIT
# test_run_command.py - `hipacm run` itself: exit statuses, signal forwarding, LD_PRELOAD,
# --print-env, the --stats summary of the intercept library's records, and a missing library.
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import SHIM_NAME, run


def hipacm_run(cli, *args, env, check=False, **kwargs):
    return run([cli, "run", *args], env, check=check, **kwargs)


@pytest.mark.parametrize("script, status", [("exit 0", 0), ("exit 3", 3), ("exit 255", 255),
                                            ("kill -TERM $$", 128 + 15),
                                            ("kill -KILL $$", 128 + 9)])
def test_the_exit_status_is_the_commands(cli, shim, env, script, status):
    assert hipacm_run(cli, "--", "sh", "-c", script, env=env).returncode == status


def test_a_command_that_cannot_run_is_127_or_126_with_a_message(cli, shim, env, tmp_path):
    missing = hipacm_run(cli, "--", "hipacm-no-such-command", env=env)
    assert missing.returncode == 127
    assert "cannot run 'hipacm-no-such-command': command not found" in missing.stderr
    not_executable = tmp_path / "script.sh"
    not_executable.write_text("#!/bin/sh\nexit 0\n")
    denied = hipacm_run(cli, str(not_executable), env=env)
    assert denied.returncode == 126
    assert f"cannot run '{not_executable}'" in denied.stderr


def test_usage_errors_exit_2(cli, shim, env):
    no_command = hipacm_run(cli, env=env)
    assert no_command.returncode == 2 and "give the COMMAND to run" in no_command.stderr
    unknown = hipacm_run(cli, "--no-such-option", "true", env=env)
    assert unknown.returncode == 2 and "unknown option '--no-such-option'" in unknown.stderr


def test_commands_own_options_stay_its_own(cli, shim, env):
    # After COMMAND, even run's and the tool's own option names are COMMAND's.
    echoed = hipacm_run(cli, "echo", "--stats", "--help", "-v", "--", env=env, check=True)
    assert echoed.stdout == "--stats --help -v --\n"
    assert echoed.stderr == ""
    # After `--`, a COMMAND may start with a dash; it is then looked up, not parsed.
    assert hipacm_run(cli, "--", "-x", env=env).returncode == 127


def test_the_library_is_preloaded_first_and_once(cli, shim, env):
    script = 'printf "%s" "$LD_PRELOAD"'
    alone = hipacm_run(cli, "sh", "-c", script, env=env, check=True)
    assert alone.stdout == str(shim)
    env["LD_PRELOAD"] = "/nonexistent/libother.so"
    # The dynamic linker complains about the other library in the child; that is its business.
    kept = hipacm_run(cli, "sh", "-c", script, env=env)
    assert kept.stdout == f"{shim}:/nonexistent/libother.so"
    env["LD_PRELOAD"] = str(shim)
    nested = hipacm_run(cli, "sh", "-c", script, env=env, check=True)
    assert nested.stdout == str(shim)


def test_print_env_prints_a_line_for_eval(cli, shim, env):
    printed = hipacm_run(cli, "--print-env", env=env, check=True)
    assert printed.stdout == f"export LD_PRELOAD='{shim}'\n"
    env["LD_PRELOAD"] = "/opt/it's here/libother.so"
    quoted = hipacm_run(cli, "--print-env", env=env, check=True)
    assert quoted.stdout == f"export LD_PRELOAD='{shim}:/opt/it'\\''s here/libother.so'\n"
    # What a job script does with it.
    env.pop("LD_PRELOAD")
    evaluated = run(["sh", "-c", f'eval "$("{cli}" run --print-env)"; printf "%s" "$LD_PRELOAD"'],
                    env)
    assert evaluated.stdout == str(shim)


def test_print_env_takes_no_command_and_no_stats(cli, shim, env):
    assert hipacm_run(cli, "--print-env", "true", env=env).returncode == 2
    assert hipacm_run(cli, "--print-env", "--stats", env=env).returncode == 2


def record(event, reason=None):
    fields = f'"pid":4242,"event":"{event}"' + (f',"reason":"{reason}"' if reason else "")
    return "{" + fields + "}"


def test_stats_summarises_every_process_records(cli, shim, env, tmp_path):
    # The records the intercept library appends, written here by the command and by a process it
    # starts: the summary counts them all, and the file is gone afterwards.
    def appends(lines):
        return "".join(f"echo '{line}' >> \"$HIPACM_RUN_STATS\"\n" for line in lines)

    child = tmp_path / "child.sh"
    child.write_text(appends([record("passthrough", "-fgpu-rdc"),
                              record("passthrough", "hiprtcGetBitcode"),
                              record("passthrough", "-fgpu-rdc")]))
    script = appends([record("hit"), record("hit"), record("compiled"), record("failed")]) + \
        f'sh "{child}"\nprintf "%s" "$HIPACM_RUN_STATS"\n'
    result = hipacm_run(cli, "--stats", "sh", "-c", script, env=env, check=True)
    assert result.stderr == ("hipacm run: 7 compiles: 2 cache hits, 1 compiled, 1 failed, "
                             "3 passed through (-fgpu-rdc x2, hiprtcGetBitcode x1)\n")
    stats_file = Path(result.stdout)
    assert stats_file.name == "stats.jsonl" and not stats_file.exists()
    assert not stats_file.parent.exists()


def test_stats_counts_nothing_for_a_program_without_compiles(cli, shim, env):
    result = hipacm_run(cli, "--stats", "--", "sh", "-c", "echo 'not a record' >> "
                        "\"$HIPACM_RUN_STATS\"; exit 4", env=env)
    assert result.returncode == 4
    assert result.stderr == ("hipacm run: 0 compiles: 0 cache hits, 0 compiled, 0 failed, "
                             "0 passed through; 1 record unreadable\n")


@pytest.mark.parametrize("sent, trapped", [(signal.SIGTERM, "TERM"), (signal.SIGINT, "INT"),
                                           (signal.SIGHUP, "HUP")])
def test_signals_sent_to_run_reach_the_command(cli, shim, env, tmp_path, sent, trapped):
    ready = tmp_path / "ready"
    script = f'trap "exit 42" {trapped}; touch "{ready}"; while :; do sleep 0.05; done'
    process = subprocess.Popen([cli, "run", "--stats", "--", "sh", "-c", script], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert process.poll() is None and time.monotonic() < deadline, "no command started"
            time.sleep(0.02)
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 42
    # run outlived the signal: it still summarised.
    assert stderr.startswith("hipacm run: 0 compiles")


def copy_tool(cli, into, with_shim):
    """The tool and libhipacm.so.1 in an installed layout (bin/, lib/) of their own."""
    build = Path(cli).resolve().parent
    (into / "bin").mkdir(parents=True)
    (into / "lib").mkdir()
    shutil.copy2(cli, into / "bin" / "hipacm")
    shutil.copy2((build / "libhipacm.so.1").resolve(), into / "lib" / "libhipacm.so.1")
    if with_shim:
        shutil.copy2(build / SHIM_NAME, into / "lib" / SHIM_NAME)
    return into / "bin" / "hipacm"


def test_an_installed_tool_finds_the_library_beside_libhipacm(cli, shim, env, tmp_path):
    tool = copy_tool(cli, tmp_path / "prefix", with_shim=True)
    # Over the build's RUNPATH; what the path held stays after it (a ROCm root's bundled libraries).
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(tmp_path / "prefix" / "lib"), env.get("LD_LIBRARY_PATH", "")) if p)
    printed = run([str(tool), "run", "--print-env"], env)
    assert printed.stdout == f"export LD_PRELOAD='{tmp_path / 'prefix' / 'lib' / SHIM_NAME}'\n"


def test_a_missing_library_is_a_clear_error(cli, shim, env, tmp_path):
    tool = copy_tool(cli, tmp_path / "prefix", with_shim=False)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (str(tmp_path / "prefix" / "lib"), env.get("LD_LIBRARY_PATH", "")) if p)
    for args in (["--", "true"], ["--print-env"]):
        result = run([str(tool), "run", *args], env, check=False)
        assert result.returncode == 125, result.stderr
        assert result.stdout == ""
        assert f"hipacm run: error: {SHIM_NAME} was not found beside this hipacm (looked in " \
               f"{tmp_path / 'prefix' / 'lib'}, {tmp_path / 'prefix' / 'bin'})" in result.stderr
