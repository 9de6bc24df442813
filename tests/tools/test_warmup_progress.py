# SPDX-License-Identifier: MIT
# test_warmup_progress.py - the progress bar on a terminal: fits its width, redraws with \r,
# honours NO_COLOR and TERM=dumb.
import pytest

from conftest import EXAMPLES, base_env, run_with_stderr_on_a_terminal


def warm_on_a_terminal(cli_path, cache_dir, paths, columns=None, env=None):
    """Runs warmup with stderr on a new terminal `columns` wide (None: the terminal reports 0)."""
    full_env = base_env(cache_dir)
    for name in ("NO_COLOR", "COLUMNS", "TERM"):
        full_env.pop(name, None)
    full_env["TERM"] = "xterm"
    full_env.update(env or {})
    rc, err = run_with_stderr_on_a_terminal(
        [cli_path, "warmup", *map(str, paths), "--arch", "gfx90a", "--no-cache"], full_env,
        columns=columns)
    # The terminal turns each \n into \r\n.
    return rc, err.replace("\r\n", "\n")


def bar_draws(err):
    """Every drawing of the bar: the text between \r's up to the bar's closing newline."""
    bar = err.split("\n", 1)[0]
    assert bar.startswith("\r")
    return bar.split("\r")[1:]


KERNELS = [EXAMPLES / "saxpy.hip", EXAMPLES / "vector_add.hip", EXAMPLES / "scale.hip"]


@pytest.mark.parametrize("columns", [40, 60, 200])
def test_the_bar_fits_the_terminal_and_redraws_in_place(cli_path, backend_usable, cache_dir,
                                                        columns):
    rc, err = warm_on_a_terminal(cli_path, cache_dir, KERNELS, columns=columns)
    assert rc == 0, err
    draws = bar_draws(err)
    assert draws and "3/3 kernels" in draws[-1]
    for draw in draws:
        assert len(draw) <= columns - 1, draw
        assert "\x1b" not in draw  # padding with spaces, not terminal controls
    if columns >= 100:
        assert draws[-1].startswith("[") and "ETA done" in draws[-1]
    assert "hipacm: warmup" not in err


def test_columns_is_the_fallback_width(cli_path, backend_usable, cache_dir):
    rc, err = warm_on_a_terminal(cli_path, cache_dir, KERNELS, env={"COLUMNS": "45"})
    assert rc == 0, err
    for draw in bar_draws(err):
        assert len(draw) <= 44, draw


def test_failures_are_red_unless_no_color(cli_path, backend_usable, cache_dir, broken_kernel):
    rc, err = warm_on_a_terminal(cli_path, cache_dir, [broken_kernel], columns=120)
    assert rc == 1
    assert "\x1b[31m1 failed\x1b[0m" in bar_draws(err)[-1]
    rc, err = warm_on_a_terminal(cli_path, cache_dir, [broken_kernel], columns=120,
                                 env={"NO_COLOR": "1"})
    assert rc == 1
    assert "1 failed" in bar_draws(err)[-1]
    assert "\x1b" not in err


def test_a_dumb_terminal_gets_plain_lines(cli_path, backend_usable, cache_dir):
    rc, err = warm_on_a_terminal(cli_path, cache_dir, KERNELS, columns=80, env={"TERM": "dumb"})
    assert rc == 0, err
    assert "\r" not in err and "\x1b" not in err
    lines = [line for line in err.splitlines() if line.startswith("hipacm: warmup ")]
    assert lines and lines[-1].startswith("hipacm: warmup 3/3 kernels")
