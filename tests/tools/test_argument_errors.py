# SPDX-License-Identifier: MIT
# test_argument_errors.py - CLI11's parse errors in the tool's own form ("hipacm: error: CMD: ..."),
# exit status 2, a did-you-mean for mistyped options, and `hipacm help [CMD [SUBCMD]]`.
import pytest

from conftest import EXAMPLES

SAXPY = str(EXAMPLES / "saxpy.hip")
COMMANDS = {"warmup", "inspect", "doctor", "run", "cache", "cache stats", "cache list",
            "cache prune", "cache export"}


def help_hint(message):
    """The line that follows the error: the --help of the command the message names."""
    named = message.split(": ")[2]
    return f"Run 'hipacm {named} --help'" if named in COMMANDS else "Run 'hipacm --help'"


@pytest.mark.parametrize("args,message", [
    (["warmup", "--jobz", "3", SAXPY],
     "hipacm: error: warmup: unknown option '--jobz'; did you mean '--jobs'?"),
    (["warmup", "--jobz=3", SAXPY],
     "hipacm: error: warmup: unknown option '--jobz'; did you mean '--jobs'?"),
    (["warmup", SAXPY, "--arhc", "gfx90a"],
     "hipacm: error: warmup: unknown option '--arhc'; did you mean '--arch'?"),
    (["inspect", "kernel.co", "--jsno"],
     "hipacm: error: inspect: unknown option '--jsno'; did you mean '--json'?"),
    (["cache", "list", "--verbos"],
     "hipacm: error: cache list: unknown option '--verbos'; did you mean '--verbose'?"),
    (["doctor", "-jsn"], "hipacm: error: doctor: unknown option '-jsn'; did you mean '--json'?"),
    (["doctor", "-json"], "hipacm: error: doctor: unknown option '-json'; did you mean '--json'?"),
    # An option of another command says whose it is.
    (["cache", "stats", "--dry-run"],
     "hipacm: error: cache stats: unknown option '--dry-run': it is an option of "
     "'hipacm warmup' or 'hipacm cache remote push', not of 'hipacm cache stats'"),
    (["doctor", "--max-bytes", "1G"],
     "hipacm: error: doctor: unknown option '--max-bytes': it is an option of "
     "'hipacm cache prune', not of 'hipacm doctor'"),
    (["cache", "stats", "--arch", "gfx90a"],
     "hipacm: error: cache stats: unknown option '--arch': it is an option of 'hipacm warmup', "
     "'hipacm cache list', 'hipacm cache export' or 'hipacm cache remote pull', not of "
     "'hipacm cache stats'"),
    # Nothing near: no suggestion, but still the command's own form.
    (["warmup", SAXPY, "--frobnicate"], "hipacm: error: warmup: unknown option '--frobnicate'\n"),
])
def test_unknown_options_get_the_commands_form_and_a_suggestion(run, tmp_path, args, message):
    r = run(*args)
    assert r.rc == 2, r.err
    assert message in r.err + "\n", r.err
    assert help_hint(message) + " for more information." in r.err
    assert r.out == ""
    assert not (tmp_path / "cache").exists()  # nothing ran


@pytest.mark.parametrize("args,message", [
    (["inspect"], "hipacm: error: inspect: "),  # its FILE|KEY argument is required
    (["cache", "prune"], "hipacm: error: cache prune: --max-bytes is required"),
    (["cache", "export", "--max-code-object-version", "9", "x.hipacm"],
     "hipacm: error: cache export: --max-code-object-version: Value 9 not in range"),
    (["warmup", SAXPY, "--jobs", "many"], "hipacm: error: warmup: "),
    (["cache"], "hipacm: error: cache: a subcommand is required: stats, list, verify, prune, clear, "
                "export, import, remote"),
    ([], "hipacm: error: a subcommand is required: warmup, inspect, doctor, cache, run"),
])
def test_other_parse_errors_get_the_commands_form(run, args, message):
    r = run(*args)
    assert r.rc == 2, r.err
    assert message in r.err, r.err
    assert help_hint(message) + " for more information." in r.err
    assert "Run with --help" not in r.err  # CLI11's own words are gone


@pytest.mark.parametrize("args,message", [
    (["warmup", "-jobs", "3", SAXPY],
     "hipacm: error: warmup: '-jobs' would be read as '-j obs'; did you mean '--jobs'?"),
    (["warmup", SAXPY, "-arch", "gfx90a"],
     "hipacm: error: warmup: '-arch' would be read as '-a rch'; did you mean '--arch'?"),
])
def test_a_long_option_with_one_dash_is_refused_before_anything_runs(run, tmp_path, args, message):
    r = run(*args)
    assert r.rc == 2, r.err
    assert message in r.err, r.err
    assert not (tmp_path / "cache").exists()


def test_a_misread_short_option_gets_a_hint(run):
    # "-job 4" reads as "-j ob": CLI11 refuses the value, and the hint says what was meant.
    r = run("warmup", "-job", "4", SAXPY)
    assert r.rc == 2, r.err
    assert r.err.startswith("hipacm: error: warmup: "), r.err
    assert "'-job' is read as '-j ob'; did you mean '--jobs'?" in r.err


def test_short_options_with_attached_values_still_work(run, tmp_path):
    # -D and -I take their value in the same word; neither is mistaken for a long option.
    r = run("warmup", SAXPY, "--arch", "gfx90a", "-DEBUG=1", "-I" + str(tmp_path), "--dry-run")
    assert "would be read as" not in r.err and "unknown option" not in r.err, r.err


@pytest.mark.parametrize("words", [[], ["warmup"], ["inspect"], ["doctor"], ["cache"],
                                   ["cache", "stats"], ["cache", "export"], ["run"]])
def test_help_prints_what_help_flags_print(run, words):
    flag = run(*words, "--help")
    assert flag.rc == 0, flag.err
    helped = run("help", *words)
    assert helped.rc == 0, helped.err
    assert helped.out == flag.out
    assert helped.err == ""
    assert "Usage: " + " ".join(["hipacm", *words]) in helped.out


def test_help_takes_the_tools_flags_before_it(run):
    assert run("-q", "help", "doctor").out == run("doctor", "--help").out


@pytest.mark.parametrize("words,message", [
    (["warmpu"], "hipacm: error: help: unknown command 'warmpu'; did you mean 'warmup'?"),
    (["cache", "stast"], "hipacm: error: help: unknown cache command 'stast'; did you mean "
                         "'stats'?"),
    (["frobnicate"], "hipacm: error: help: unknown command 'frobnicate'; the commands are warmup, "
                     "inspect, doctor, cache, run"),
    (["doctor", "extra"], "hipacm: error: help: 'hipacm doctor' has no commands ('extra' is not "
                          "one)"),
])
def test_help_of_an_unknown_command_is_an_argument_error(run, words, message):
    r = run("help", *words)
    assert r.rc == 2
    assert message in r.err, r.err
    assert r.out == ""


def test_help_and_version_flags_are_unchanged(run):
    r = run("--help")
    assert r.rc == 0 and r.out.startswith("hipacm: warm, inspect and diagnose"), r.out
    assert run("warmup", "--help").rc == 0
    assert run("--version").rc == 0
