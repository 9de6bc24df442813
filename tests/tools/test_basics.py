# SPDX-License-Identifier: MIT
# test_basics.py - hipacm --version, --help on every subcommand, usage errors, inspect's errors.
import pytest


def test_version_names_plugin_abi_and_backends(run):
    r = run("--version")
    assert r.rc == 0, r.err
    first = r.out.splitlines()[0]
    assert first.startswith("hipacm 0.1.0 (ABI 1.5, ")
    assert "libhipacm.so" in first
    assert any(line.startswith("hipRTC ") for line in r.out.splitlines())
    assert any(line.startswith("comgr ") for line in r.out.splitlines())


@pytest.mark.parametrize("command", [[], ["warmup"], ["inspect"], ["doctor"]])
def test_help_prints_usage_with_examples(run, command):
    r = run(*command, "--help")
    assert r.rc == 0, r.err
    assert "Usage:" in r.out
    assert "Examples:" in r.out
    assert "hipacm " + (command[0] if command else "warmup") in r.out


def test_no_subcommand_is_a_usage_error(run):
    r = run()
    assert r.rc == 2
    assert "subcommand is required" in r.err


def test_unknown_option_is_a_usage_error(run):
    r = run("warmup", "x.hip", "--arch", "gfx90a", "--no-such-option")
    assert r.rc == 2


def test_no_cache_and_cache_dir_exclude_each_other(run, tmp_path):
    r = run("warmup", "x.hip", "--arch", "gfx90a", "--no-cache", "--cache-dir", tmp_path)
    assert r.rc == 2
    assert "excludes" in r.err


def test_inspect_missing_file_exits_2(run, tmp_path):
    r = run("inspect", tmp_path / "missing.co")
    assert r.rc == 2
    assert "missing.co" in r.err


def test_inspect_non_elf_exits_2(run, tmp_path):
    path = tmp_path / "text.co"
    path.write_text("not a code object\n" * 10)
    r = run("inspect", path)
    assert r.rc == 2
    assert "invalid ELF" in r.err


def test_inspect_lists_global_functions_of_a_non_amdgpu_elf(run, tmp_path):
    # The tool's own executable: an x86-64 ELF whose global functions include main.
    import os
    r = run("inspect", "--json", os.environ["HIPACM_CLI"])
    assert r.rc == 0, r.err
    doc = r.json()
    assert doc["machine"] == 62 and doc["machine_name"] == "EM_62"
    assert "main" in doc["kernels"]
