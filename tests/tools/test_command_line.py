# SPDX-License-Identifier: MIT
# test_command_line.py - what every command shares: a mistyped command gets a suggestion, and -q
# and -v work before or after any command.
import re

import pytest

from conftest import EXAMPLES


@pytest.mark.parametrize("args,message", [
    (["warmpu"], "hipacm: error: unknown command 'warmpu'; did you mean 'warmup'?"),
    (["doctr", "--json"], "hipacm: error: unknown command 'doctr'; did you mean 'doctor'?"),
    (["-q", "cahce", "stats"], "hipacm: error: unknown command 'cahce'; did you mean 'cache'?"),
    (["cache", "stast"], "hipacm: error: unknown cache command 'stast'; did you mean 'stats'?"),
    (["cache", "--db", "x.sqlite3", "lsit"], "unknown cache command 'lsit'; did you mean 'list'?"),
    (["frobnicate"], "unknown command 'frobnicate'; the commands are warmup, inspect, doctor, "
                     "cache"),
])
def test_unknown_commands_get_a_suggestion(run, tmp_path, args, message):
    r = run(*args)
    assert r.rc == 2
    assert message in r.err
    assert "--help" in r.err
    assert not (tmp_path / "cache").exists()


def test_known_commands_and_their_values_are_not_mistaken_for_typos(run, tmp_path):
    # --db takes a value that looks like a command; cache prune's own arguments come after it.
    r = run("cache", "--db", tmp_path / "stats", "stats")
    assert r.rc == 2 and "no cache at" in r.err and "unknown" not in r.err
    r = run("inspect", tmp_path / "warmup.co")
    assert "unknown command" not in r.err


@pytest.mark.parametrize("flags", [["-q", "cache", "list"], ["cache", "-q", "list"],
                                   ["cache", "list", "--quiet"]])
def test_quiet_leaves_the_results_alone(run, backend_usable, flags):
    assert run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-q").rc == 0
    r = run(*flags)
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert len(lines) == 1 and lines[0].endswith("saxpy.hip"), r.out  # no heading, no total


@pytest.mark.parametrize("flags", [["-v", "cache", "list"], ["cache", "list", "--verbose"]])
def test_verbose_shows_whole_keys(run, backend_usable, flags):
    assert run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-q").rc == 0
    r = run(*flags)
    assert r.rc == 0, r.err
    assert re.search(r"^[0-9a-f]{64}  gfx90a ", r.out, re.M), r.out
    assert "hiprtc" in r.out  # the backend of each entry
    short = run("cache", "list").out
    assert not re.search(r"[0-9a-f]{64}", short)


def test_global_quiet_reaches_warmup(run, backend_usable):
    kernel = EXAMPLES / "saxpy.hip"
    loud = run("warmup", kernel, "--arch", "gfx90a", "--no-cache")
    assert loud.rc == 0 and loud.err != ""  # progress lines on a pipe
    quiet = run("-q", "warmup", kernel, "--arch", "gfx90a", "--no-cache")
    assert quiet.rc == 0 and quiet.err == ""


def test_quiet_and_verbose_exclude_each_other(run):
    r = run("-q", "cache", "stats", "-v")
    assert r.rc == 2 and "excludes" in r.err


def test_verbose_turns_on_the_library_info_log_unless_hipacm_log_is_set(run, backend_usable):
    args = ["warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--no-cache"]
    plain = run(*args)
    assert plain.rc == 0 and "hipacm: info:" not in plain.err
    verbose = run("-v", *args)
    assert verbose.rc == 0 and "hipacm: info: " in verbose.err, verbose.err
    chosen = run(*args, "-v", env={"HIPACM_LOG": "off"})
    assert chosen.rc == 0 and "hipacm: info:" not in chosen.err
