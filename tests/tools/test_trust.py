# SPDX-License-Identifier: MIT
# test_trust.py - hipacm's inputs are untrusted: variants are kept, bad input exits 2, names are
# escaped, and a hung compile ends with a timeout.
import json
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import EXAMPLES

SCHEMA = "hipacm-examples-manifest-1"

# One file, three kernels: which one exists depends on -DVARIANT, as in solver -D sets.
VARIANT_SOURCE = """\
#if VARIANT == 1
extern "C" __global__ void variant_one(float* x) { x[0] = 1.0f; }
#elif VARIANT == 2
extern "C" __global__ void variant_two(float* x) { x[0] = 2.0f; }
#else
extern "C" __global__ void variant_three(float* x) { x[0] = 3.0f; }
#endif
"""

SIMPLE_SOURCE = 'extern "C" __global__ void simple(float* x) { x[0] = 1.0f; }\n'


def write_manifest(path, kernels):
    path.write_text(json.dumps({"schema": SCHEMA, "kernels": kernels}))
    return path


def assert_input_error(r, *fragments):
    assert r.rc == 2, (r.rc, r.out, r.err)
    assert "hipacm: error:" in r.err or "Run with --help" in r.err, r.err
    for fragment in fragments:
        assert fragment in r.err, r.err


# --- 10: a kernel is the whole request ------------------------------------------------------

def test_trust10_option_variants_of_one_source_are_each_compiled(run, backend_usable, tmp_path):
    (tmp_path / "variants.hip").write_text(VARIANT_SOURCE)
    entries = [{"source": "variants.hip", "options": [f"-DVARIANT={n}"]} for n in (1, 2, 3)]
    entries.append(dict(entries[0]))  # an exact duplicate of the whole request is warmed once
    manifest = write_manifest(tmp_path / "manifest.json", entries)
    r = run("warmup", manifest, "--arch", "gfx90a,gfx1030", "--no-cache", "-v", "--json", "-")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["totals"]["kernels"] == 6 and doc["totals"]["compiled"] == 6
    assert len(doc["kernels"]) == 6
    for arch in ("gfx90a", "gfx1030"):
        rows = [k for k in doc["kernels"] if k["arch"] == arch]
        assert [k["kernels"] for k in rows] == [["variant_one"], ["variant_two"],
                                                ["variant_three"]]
        assert [k["options"] for k in rows] == [["-DVARIANT=1"], ["-DVARIANT=2"],
                                                ["-DVARIANT=3"]]
        assert len({k["key"] for k in rows}) == 3
        labels = [k["label"] for k in rows]
        assert len(set(labels)) == 3 and all("-DVARIANT=" in label for label in labels)
    # The table (-v goes to stderr with --json -) names each variant too.
    for n in (1, 2, 3):
        assert f"[-DVARIANT={n}]" in r.err


def test_trust10_header_variants_with_the_same_options_get_distinct_labels(run, backend_usable,
                                                                            tmp_path):
    (tmp_path / "uses_header.hip").write_text(
        '#include "value.h"\nextern "C" __global__ void k(float* x) { x[0] = VALUE; }\n')
    (tmp_path / "one.h").write_text("#define VALUE 1.0f\n")
    (tmp_path / "two.h").write_text("#define VALUE 2.0f\n")
    manifest = write_manifest(tmp_path / "manifest.json", [
        {"source": "uses_header.hip", "options": ["-O3"], "headers": {"value.h": "one.h"}},
        {"source": "uses_header.hip", "options": ["-O3"], "headers": {"value.h": "two.h"}},
    ])
    r = run("warmup", manifest, "--arch", "gfx90a", "--no-cache", "--json", "-")
    assert r.rc == 0, r.err
    rows = json.loads(r.out)["kernels"]
    assert len(rows) == 2 and rows[0]["key"] != rows[1]["key"]
    assert rows[0]["label"] != rows[1]["label"]
    assert "#1" in rows[0]["label"] and "#2" in rows[1]["label"]


def test_trust10_a_file_reached_twice_with_the_same_request_is_warmed_once(run, backend_usable):
    r = run("warmup", EXAMPLES / "saxpy.hip", EXAMPLES / "saxpy.hip", "--arch", "gfx90a",
            "--no-cache", "--json", "-")
    assert r.rc == 0, r.err
    rows = json.loads(r.out)["kernels"]
    assert len(rows) == 1 and rows[0]["label"] == rows[0]["path"]


# --- 13: bad input exits 2 with a message, never a crash or a hang ---------------------------

def test_trust13_deeply_nested_manifest_exits_2(run, tmp_path):
    depth = 50_000
    path = tmp_path / "deep.json"
    path.write_text('{"schema": "%s", "kernels": %s%s}' % (SCHEMA, "[" * depth, "]" * depth))
    r = run("warmup", path, "--arch", "gfx90a", timeout=60)
    assert_input_error(r, "nested deeper than 64 levels")


def test_trust13_deep_nesting_in_an_ignored_key_exits_2(run, tmp_path):
    (tmp_path / "k.hip").write_text(SIMPLE_SOURCE)
    deep = "[" * 50_000 + "]" * 50_000
    path = tmp_path / "m.json"
    path.write_text('{"schema": "%s", "kernels": [{"source": "k.hip", "description": %s}]}'
                    % (SCHEMA, deep))
    r = run("warmup", path, "--arch", "gfx90a", timeout=60)
    assert_input_error(r, "nested deeper than 64 levels")


def test_trust13_nesting_at_the_limit_is_still_parsed(run, tmp_path):
    # 64 levels are fine: the error is then about the content, not the depth.
    path = tmp_path / "deep.json"
    path.write_text('{"schema": "%s", "kernels": [%s1%s]}' % (SCHEMA, "[" * 62, "]" * 62))
    r = run("warmup", path, "--arch", "gfx90a")
    assert_input_error(r, "kernels[0]: entry must be an object")


def test_trust13_oversized_manifest_exits_2(run, tmp_path):
    path = tmp_path / "big.json"
    path.write_text('{"schema": "%s", "kernels": [], "pad": "%s"}' % (SCHEMA, "x" * (17 << 20)))
    r = run("warmup", path, "--arch", "gfx90a")
    assert_input_error(r, "larger than the limit of 16 MiB")


@pytest.mark.parametrize("role", ["source", "manifest", "header"])
def test_trust13_fifo_input_exits_2_without_hanging(run, tmp_path, role):
    fifo = tmp_path / ("pipe.json" if role == "manifest" else "pipe.hip")
    os.mkfifo(fifo)
    if role == "header":
        (tmp_path / "k.hip").write_text(SIMPLE_SOURCE)
        target = write_manifest(tmp_path / "m.json",
                                [{"source": "k.hip", "headers": {"h.h": "pipe.hip"}}])
    else:
        target = fifo
    r = run("warmup", target, "--arch", "gfx90a", timeout=60)
    assert_input_error(r, "not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_trust13_device_named_as_a_source_exits_2(run, tmp_path, device):
    (tmp_path / "k.hip").write_text(SIMPLE_SOURCE)
    manifest = write_manifest(tmp_path / "m.json", [{"source": device}])
    r = run("warmup", manifest, "--arch", "gfx90a", timeout=60)
    assert_input_error(r, device, "not a regular file")
    r = run("warmup", device, "--arch", "gfx90a", timeout=60)
    assert_input_error(r, device, "not a regular file")


def test_trust13_source_with_a_nul_byte_exits_2(run, tmp_path):
    path = tmp_path / "nul.hip"
    path.write_bytes(SIMPLE_SOURCE.encode() + b"\0 garbage the compiler would never see\n")
    r = run("warmup", path, "--arch", "gfx90a")
    assert_input_error(r, "NUL byte at offset")


TYPE_ERRORS = {
    "document is an array": ([], "must be a JSON object"),
    "schema is a number": ({"schema": 1, "kernels": []}, "schema is a number, want"),
    "schema is missing": ({"kernels": []}, "schema is missing, want"),
    "kernels is an object": ({"schema": SCHEMA, "kernels": {}}, "'kernels' must be an array"),
    "entry is a string": ({"schema": SCHEMA, "kernels": ["k.hip"]}, "entry must be an object"),
    "source is a number": ({"schema": SCHEMA, "kernels": [{"source": 3}]}, "'source'"),
    "options is a string": ({"schema": SCHEMA, "kernels": [{"source": "k.hip", "options": "-O3"}]},
                            "'options' must be an array of strings"),
    "option is a number": ({"schema": SCHEMA, "kernels": [{"source": "k.hip", "options": [3]}]},
                           "options[0] must be a string"),
    "option is null": ({"schema": SCHEMA, "kernels": [{"source": "k.hip", "options": [None]}]},
                       "options[0] must be a string"),
    "name expression is an object": (
        {"schema": SCHEMA, "kernels": [{"source": "k.hip", "name_expressions": [{}]}]},
        "name_expressions[0] must be a string"),
    "headers is an array": ({"schema": SCHEMA, "kernels": [{"source": "k.hip", "headers": []}]},
                            "'headers' must map include names to paths"),
    "header path is a number": (
        {"schema": SCHEMA, "kernels": [{"source": "k.hip", "headers": {"h.h": 1}}]},
        "header 'h.h' must map to a path"),
    "option holds a NUL": (
        {"schema": SCHEMA, "kernels": [{"source": "k.hip", "options": ["-DX\u0000=1"]}]},
        "contains a NUL character"),
}


@pytest.mark.parametrize("case", sorted(TYPE_ERRORS))
def test_trust13_manifest_type_errors_exit_2(run, tmp_path, case):
    (tmp_path / "k.hip").write_text(SIMPLE_SOURCE)
    document, message = TYPE_ERRORS[case]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(document))
    r = run("warmup", path, "--arch", "gfx90a")
    assert_input_error(r, message)


def test_trust13_manifest_that_is_not_json_exits_2(run, tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b'{"schema": "\xff\xfe", "kernels": [')
    r = run("warmup", path, "--arch", "gfx90a")
    assert_input_error(r, "not valid JSON")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "-1", "1e999", "ten", "", "1x",
                                   "604801"])
def test_trust13_bad_timeout_exits_2(run, value):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--timeout", value)
    assert_input_error(r, "--timeout")


@pytest.mark.parametrize("option", ["--cache-dir", "--json", "--output-dir"])
def test_trust13_empty_path_option_exits_2(run, option):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", option, "")
    assert_input_error(r, "must not be empty")


def test_trust13_empty_db_and_inspect_arguments_exit_2(run):
    assert_input_error(run("cache", "--db", "", "stats"), "must not be empty")
    assert_input_error(run("inspect", ""), "must not be empty")
    assert_input_error(run("warmup", "", "--arch", "gfx90a"), "must not be empty")


@pytest.mark.parametrize("value", [",", ",,", "gfx90a,", ",gfx90a", "gfx90a,,gfx1030"])
def test_trust13_empty_arch_items_exit_2(run, value):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", value, env={"HIPACM_ARCH": "gfx90a"})
    assert_input_error(r, "--arch: empty arch name")


@pytest.mark.parametrize("name", ["/tmp/abs.h", "../escape.h", "sub/../../escape.h", "",
                                  "a\x1b[2Jb.h", "dir//x.h"])
def test_trust01_refused_header_names_in_a_manifest_exit_2(run, tmp_path, name):
    (tmp_path / "k.hip").write_text(SIMPLE_SOURCE)
    (tmp_path / "h.h").write_text("#define H 1\n")
    manifest = write_manifest(tmp_path / "m.json",
                              [{"source": "k.hip", "headers": {name: "h.h"}}])
    r = run("warmup", manifest, "--arch", "gfx90a")
    assert_input_error(r, "header name refused")
    assert "\x1b" not in r.err


def test_trust01_a_file_name_outside_the_name_set_still_compiles(run, backend_usable, tmp_path):
    # The file name is only a label for the compiler: "bad name;rm.hip" reaches
    # hipRTC as "bad_name_rm.hip", and reports keep the real path.
    path = tmp_path / "bad name;rm.hip"
    path.write_text(SIMPLE_SOURCE)
    r = run("warmup", path, "--arch", "gfx90a", "--no-cache", "--json", "-")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["totals"]["compiled"] == 1
    assert doc["kernels"][0]["kernels"] == ["simple"]
    assert "bad name;rm.hip" in doc["kernels"][0]["label"]


# --- 14: numeric options at their edges ------------------------------------------------------

def test_trust14_log_lines_zero_prints_no_log_lines(run, backend_usable, broken_kernel):
    r = run("warmup", broken_kernel, "--arch", "gfx90a", "--no-cache", "--log-lines", "0", "-q")
    assert r.rc == 1, r.err  # a failed kernel, not a crash (a signal would be negative)
    assert "FAILED" in r.err
    assert "lines omitted" in r.err
    assert "undefined_name" not in r.err  # no line of the log is kept
    assert "\x00" not in r.err


@pytest.mark.parametrize("keep", ["1", "1000000"])
def test_trust14_log_lines_small_and_large_keep_the_log(run, backend_usable, broken_kernel, keep):
    r = run("warmup", broken_kernel, "--arch", "gfx90a", "--no-cache", "--log-lines", keep, "-q")
    assert r.rc == 1, r.err
    assert "undefined_name" in r.err


@pytest.mark.parametrize("option,value", [
    ("--log-lines", "-1"), ("--log-lines", "1000001"),
    ("--log-lines", "18446744073709551616"), ("--jobs", "-1"), ("--jobs", "4097"),
    ("--jobs", "99999999999999999999"),
])
def test_trust14_numeric_options_out_of_range_exit_2(run, option, value):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", option, value)
    assert r.rc == 2, (r.rc, r.err)
    assert option in r.err


def test_trust14_prune_refuses_negative_sizes_and_never_wraps_huge_ones(run, backend_usable,
                                                                        tmp_path):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-q")
    assert r.rc == 0, r.err
    assert run("cache", "prune", "--max-bytes", "-1").rc == 2
    assert run("cache", "prune", "--max-bytes", "1e3").rc == 2
    # Past int64: refused, or read as "keep everything"; never wrapped into a small size.
    r = run("cache", "prune", "--max-bytes", "99999999999999999999999", "--json")
    assert r.rc in (0, 2), r.err
    if r.rc == 0:
        assert r.json()["removed"] == 0 and r.json()["entries"] == 1


# --- 15: names from files and caches are escaped ---------------------------------------------

HOSTILE_NAME = "evil\x1b[2J\x1b]0;owned\x07\u202e.hip"


def hostile_cache(run, tmp_path, cache_dir):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--json", tmp_path / "r.json")
    assert r.rc == 0, r.err
    with sqlite3.connect(cache_dir / "kernels.sqlite3") as db:
        # As an imported file could hold them: a control sequence and invalid UTF-8.
        db.execute("UPDATE entries SET source_name = ? || CAST(X'FF' AS TEXT), "
                   "key = 'sha256:' || ? || substr(key, 8)", (HOSTILE_NAME, "\x1b[31m"))
    db_size = (cache_dir / "kernels.sqlite3").stat().st_size
    assert db_size > 0


def test_trust15_cache_list_escapes_names_from_the_database(run, backend_usable, tmp_path,
                                                            cache_dir):
    hostile_cache(run, tmp_path, cache_dir)
    r = run("cache", "list")
    assert r.rc == 0, r.err
    assert "\x1b" not in r.out and "\x07" not in r.out and "\u202e" not in r.out
    assert "\\e[31m" in r.out  # the key, escaped
    assert "evil\\e[2J" in r.out  # the source name, escaped
    r = run("cache", "list", "--json")
    assert r.rc == 0, r.err
    entries = r.json()["entries"]  # still valid JSON, invalid UTF-8 replaced
    assert entries[0]["source_name"].startswith(HOSTILE_NAME)
    assert entries[0]["source_name"].endswith("\ufffd")


def test_trust15_cache_verify_escapes_keys(run, backend_usable, tmp_path, cache_dir):
    hostile_cache(run, tmp_path, cache_dir)
    r = run("cache", "verify")
    assert "\x1b" not in r.out and "\x1b" not in r.err
    r = run("cache", "verify", "--json")
    json.loads(r.out)


def test_trust15_warmup_errors_escape_paths(run, tmp_path):
    # A kernel file with a NUL byte is refused, and the error names its path.
    path = tmp_path / "a\x1b[2Jb.hip"
    path.write_bytes(b"extern \"C\" __global__ void k() {}\0\n")
    r = run("warmup", path, "--arch", "gfx90a")
    assert r.rc == 2
    assert "\x1b" not in r.err and "\\e[2J" in r.err


def test_trust15_paths_with_control_bytes_and_invalid_utf8_are_escaped(run, backend_usable,
                                                                       tmp_path):
    # The directory part reaches the report, while hipRTC sees only the (valid) file name.
    directory = os.path.join(os.fsencode(tmp_path), b"d\xff\x1b[2J")
    os.mkdir(directory)
    with open(os.path.join(directory, b"k.hip"), "w") as f:
        f.write(SIMPLE_SOURCE)
    r = run("warmup", os.fsdecode(os.path.join(directory, b"k.hip")), "--arch", "gfx90a", "-v",
            "--no-cache", "--json", "-")
    assert r.rc == 0, r.err
    assert "\x1b" not in r.err and "d\\xff\\e[2J/k.hip" in r.err  # the -v line
    row = json.loads(r.out)["kernels"][0]  # still valid JSON: the bad byte is replaced
    assert row["path"].endswith("d\ufffd\x1b[2J/k.hip")


# --- 16: a hung compiler cannot hang warmup --------------------------------------------------

def test_trust16_hung_compile_times_out_and_the_rest_compile(run, backend_usable, tmp_path):
    hang = tmp_path / "hang.hip"
    hang.write_text("// @HANG@\n" + SIMPLE_SOURCE)
    env = {"HIPACM_TEST_HOOKS": "1", "HIPACM_WORKER_FAULT": "hang:when=@HANG@",
           "HIPACM_ISOLATION": "process"}
    # The limit holds for every compile, saxpy's too: it must leave room for saxpy's first
    # compile in a fresh worker on a loaded 2-core machine (ROCm 7.2: about 0.7 s alone).
    r = run("warmup", hang, EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--no-cache",
            "--timeout", "5", "--json", "-", env=env, timeout=300)
    assert r.rc == 1, r.err
    doc = json.loads(r.out)
    assert doc["timeout_seconds"] == 5.0
    hung, saxpy = doc["kernels"]
    assert hung["status"] == "failed" and hung["status_code"] == "HIPACM_ERROR_TIMEOUT"
    assert saxpy["status"] == "ok"
    assert "HIPACM_ERROR_TIMEOUT" in r.err


def test_trust16_default_timeout_is_ten_minutes(run, backend_usable, tmp_path):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--json", tmp_path / "a.json")
    assert r.rc == 0, r.err
    assert json.loads((tmp_path / "a.json").read_text())["timeout_seconds"] == 600.0
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--timeout", "0", "--json",
            tmp_path / "b.json")
    assert r.rc == 0, r.err
    assert json.loads((tmp_path / "b.json").read_text())["timeout_seconds"] == 0.0
    assert "600" in run("warmup", "--help").out


@pytest.mark.parametrize("case", ["empty source", "empty name expression"])
def test_trust13_request_the_plugin_refuses_at_submit_exits_2(run, backend_usable, tmp_path,
                                                             case):
    # Names pass the CLI's own check; the plugin's request reader refuses the rest at submit.
    (tmp_path / "empty.hip").write_text("")
    (tmp_path / "k.hip").write_text(SIMPLE_SOURCE)
    entry = ({"source": "empty.hip"} if case == "empty source"
             else {"source": "k.hip", "name_expressions": [""]})
    manifest = write_manifest(tmp_path / "m.json", [entry])
    r = run("warmup", manifest, "--arch", "gfx90a", "--no-cache")
    assert_input_error(r, "refused by hipacm", "request.")


def test_trust02_output_dir_never_writes_through_a_symlink(run, backend_usable, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "saxpy.gfx90a.co").symlink_to(victim)
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-o", out)
    assert_input_error(r, "symbolic link")
    assert victim.read_text() == "keep me\n"


def test_trust13_inspect_refuses_a_fifo_and_a_device(run, tmp_path):
    fifo = tmp_path / "pipe.co"
    os.mkfifo(fifo)
    assert_input_error(run("inspect", fifo, timeout=60), "not a regular file")
    assert_input_error(run("inspect", "/dev/zero", timeout=60), "not a regular file")


def test_trust13_cache_import_refuses_a_fifo_and_a_device(run, tmp_path):
    fifo = tmp_path / "pipe.hipacm"
    os.mkfifo(fifo)
    for target in (fifo, "/dev/zero"):
        r = run("cache", "import", target, timeout=30)
        assert_input_error(r, "not a regular file")


# --- 9: what compiles is also cached and served -------------------------------------------

FIXTURES = EXAMPLES.parent.parent / "tests" / "fixtures" / "miopen_style"


def test_trust09_every_fixture_variant_is_stored_and_served_on_the_next_run(run, backend_usable):
    # Macro-named, #if-selected and templated kernels must not only compile but
    # also pass the cache's own checks: a variant that is never stored would be
    # recompiled on every warm run.
    manifest = FIXTURES / "manifest.json"
    first = run("warmup", manifest, "--arch", "gfx90a", "--json", "-", "-q")
    assert first.rc == 0, first.err
    assert first.json()["totals"]["compiled"] == 14
    second = run("warmup", manifest, "--arch", "gfx90a", "--json", "-", "-q")
    assert second.rc == 0, second.err
    doc = second.json()
    assert [k["label"] for k in doc["kernels"] if not k["from_cache"]] == []
    assert doc["totals"]["compiled"] == 0


# --- trust2 9: options read from files do not load code into the compiler -------------------

PLUGIN_SOURCE = """\
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void hipacm_test_marker(void) {
  const char* path = getenv("HIPACM_TEST_PLUGIN_MARKER");
  if (path != NULL) {
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) { write(fd, "loaded\\n", 7); close(fd); }
  }
}
"""


@pytest.fixture
def plugin(tmp_path):
    """A real shared library whose constructor writes $HIPACM_TEST_PLUGIN_MARKER."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build a plugin with")
    source = tmp_path / "plugin.c"
    source.write_text(PLUGIN_SOURCE)
    library = tmp_path / "plugin.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def record_with_options(path, options):
    line = {"schema": "hipacm-record-1", "arch": "gfx90a", "source_name": "simple.hip",
            "options": options, "name_expressions": [], "headers": [], "source": SIMPLE_SOURCE}
    path.write_text(json.dumps(line, separators=(",", ":")) + "\n")
    return path


def test_trust2_09_a_record_line_or_manifest_entry_cannot_load_a_compiler_plugin(
        run, backend_usable, tmp_path, plugin):
    marker = tmp_path / "marker"
    env = {"HIPACM_TEST_PLUGIN_MARKER": str(marker)}
    load = ["-Xclang", "-load", "-Xclang", str(plugin)]
    record = record_with_options(tmp_path / "rec.jsonl", load)
    (tmp_path / "simple.hip").write_text(SIMPLE_SOURCE)
    manifest = write_manifest(tmp_path / "manifest.json",
                              [{"source": "simple.hip", "options": ["-O2", *load]}])
    for data_file, where in ((record, "rec.jsonl:1"), (manifest, "manifest.json: kernels[0]")):
        r = run("warmup", data_file, "--arch", "gfx90a", "--no-cache", env=env, timeout=300)
        assert_input_error(r, where, "'-load'", "--allow-compiler-plugins")
        assert not marker.exists(), "the plugin ran although the input was refused"

    # A directive in a kernel file is read from a file too; and other spellings that load code.
    directive = tmp_path / "directive.hip"
    directive.write_text(f"// hipacm: option=-fpass-plugin={plugin}\n" + SIMPLE_SOURCE)
    r = run("warmup", directive, "--arch", "gfx90a", "--no-cache", env=env, timeout=300)
    assert_input_error(r, "directive.hip", f"-fpass-plugin={plugin}")
    for options in (["-mllvm", f"-load={plugin}"], ["-fplugin=" + str(plugin)],
                    ["-Xclang=-load", f"-Xclang={plugin}"], ["-Xclang", "-add-plugin"],
                    ["-mllvm=-load", f"-mllvm={plugin}"], [f"--load-pass-plugin={plugin}"],
                    [f"@{tmp_path / 'more-options'}"]):
        record_with_options(record, options)
        r = run("warmup", record, "--arch", "gfx90a", "--no-cache", env=env, timeout=300)
        assert_input_error(r, "rec.jsonl:1", "may not load code")
    assert not marker.exists()

    # The user's explicit choice: the file's options are passed on (the plugin may then load).
    record_with_options(record, load)
    r = run("warmup", record, "--arch", "gfx90a", "--no-cache", "--allow-compiler-plugins",
            env=env, timeout=300)
    assert r.rc in (0, 1), (r.rc, r.err)
    assert "may not load code" not in r.err
    assert marker.exists(), "the plugin did not load: the refusals above would prove nothing"


# --- issue 27, item 2 (the class): outputs never go where another user planted ----------------

def _planted_by_nobody(path):
    os.chown(path, 65534, 65534, follow_symlinks=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="planting another user's files needs root")
def test_trust2_02_reports_and_code_objects_never_go_where_another_user_planted(
        run, backend_usable, tmp_path):
    kernel = EXAMPLES / "saxpy.hip"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")

    # A link planted at the report's name must not redirect the write.
    link = tmp_path / "report-link.json"
    link.symlink_to(victim)
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "--json", link)
    assert_input_error(r, "symbolic link")
    assert victim.read_text() == "precious\n"

    # Another user's file, even one everybody may write, receives nothing.
    planted = tmp_path / "report-planted.json"
    planted.write_text("")
    planted.chmod(0o666)
    _planted_by_nobody(planted)
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "--json", planted)
    assert_input_error(r, "another user")
    assert planted.read_text() == ""

    # A directory another user owns, or one everybody may write without a sticky bit: they could
    # swap a code object for their own after it is written.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    theirs.chmod(0o777)
    _planted_by_nobody(theirs)
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "-o", theirs)
    assert_input_error(r, "another user")
    assert list(theirs.iterdir()) == []
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "--json", theirs / "r.json")
    assert_input_error(r, "another user")
    assert list(theirs.iterdir()) == []
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "-o", open_dir)
    assert_input_error(r, "sticky")
    assert list(open_dir.iterdir()) == []

    # A code object file planted in the user's own directory is refused too.
    mine = tmp_path / "out"
    mine.mkdir()
    planted_co = mine / "saxpy.gfx90a.co"
    planted_co.write_bytes(b"")
    _planted_by_nobody(planted_co)
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "-o", mine)
    assert_input_error(r, "another user")
    assert planted_co.read_bytes() == b""

    # What is the user's own still works: a fresh directory, a sticky shared one, the own fds.
    fresh = tmp_path / "fresh"
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "-o", fresh, "--json",
            tmp_path / "report.json")
    assert r.rc == 0, r.err
    assert (fresh / "saxpy.gfx90a.co").read_bytes()[:4] == b"\x7fELF"
    assert json.loads((tmp_path / "report.json").read_text())["totals"]["kernels"] == 1
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "--json", sticky / "r.json")
    assert r.rc == 0, r.err
    r = run("warmup", kernel, "--arch", "gfx90a", "--no-cache", "--json", "/dev/stdout")
    assert r.rc == 0, r.err
    # The summary table comes first on stdout, then the document.
    assert json.loads(r.out[r.out.index("\n{") + 1:])["totals"]["kernels"] == 1


# --- issue 27, item 1 (the class): the compiler's environment is an input ----------------------

ENV_KERNEL = """\
#include "scale_env.h"
extern "C" __global__ void kscale(float* x) { x[0] = SCALE; }
"""


def test_trust2_01_the_compilers_environment_is_an_input_of_the_key(run, backend_usable,
                                                                    tmp_path):
    (tmp_path / "k.hip").write_text(ENV_KERNEL)
    for name, value in (("three", "3.0f"), ("five", "5.0f")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "scale_env.h").write_text(f"#define SCALE {value}\n")
    cache = tmp_path / "cache"

    def warm(tag, **env):
        out = tmp_path / f"out-{tag}"
        r = run("warmup", tmp_path / "k.hip", "--arch", "gfx90a", "--cache-dir", cache, "-o", out,
                "--json", "-", env={"HIPACM_CACHE": "readwrite", **env})
        assert r.rc == 0, r.err
        totals = json.loads(r.out)["totals"]
        return totals["cache_hits"], (out / "k.gfx90a.co").read_bytes()

    # hipRTC's driver searches CPATH and CPLUS_INCLUDE_PATH: another value is another compile.
    hits, three = warm("three", CPATH=str(tmp_path / "three"))
    assert hits == 0
    hits, again = warm("three-again", CPATH=str(tmp_path / "three"))
    assert hits == 1 and again == three, "the same environment is a hit"
    hits, five = warm("five", CPATH=str(tmp_path / "five"))
    assert hits == 0, "an object compiled under another CPATH was served"
    assert five != three
    hits, five_cplus = warm("five-cplus", CPLUS_INCLUDE_PATH=str(tmp_path / "five"))
    assert hits == 0 and five_cplus == five

    # A header reached through CPATH is probed like one in an -I directory: an edit is a miss.
    (tmp_path / "three" / "scale_env.h").write_text("#define SCALE 7.0f\n")
    hits, seven = warm("seven", CPATH=str(tmp_path / "three"))
    assert hits == 0 and seven not in (three, five)

    # A relative entry, and an empty one (the working directory to the driver), mean what they
    # mean in the host's directory, though workers compile elsewhere; they are keyed as such.
    # "five" is the absolute directory of the run above, so it is a hit from the start.
    for tag, cpath, hits in (("relative", "five", [1, 1]),
                             ("empty-entry", ":" + str(tmp_path / "nothing"), [0, 1])):
        shutil.copy(tmp_path / "five" / "scale_env.h", tmp_path / "scale_env.h")
        results = []
        for attempt in range(2):
            r = run("warmup", tmp_path / "k.hip", "--arch", "gfx90a", "--cache-dir", cache, "-o",
                    tmp_path / f"out-{tag}-{attempt}", "--json", "-",
                    env={"HIPACM_CACHE": "readwrite", "CPATH": cpath}, cwd=tmp_path)
            assert r.rc == 0, (tag, r.err)
            results.append(json.loads(r.out)["totals"]["cache_hits"])
            assert (tmp_path / f"out-{tag}-{attempt}" / "k.gfx90a.co").read_bytes() == five, tag
        assert results == hits, (tag, results)
        (tmp_path / "scale_env.h").unlink()

    # A variable through which the compiler takes arguments hipacm cannot see: compiled every
    # time, never stored.
    for attempt in range(2):
        r = run("warmup", tmp_path / "k.hip", "--arch", "gfx90a", "--cache-dir", cache, "--json",
                "-", env={"HIPACM_CACHE": "readwrite", "CPATH": str(tmp_path / "five"),
                          "HIPRTC_COMPILE_OPTIONS_APPEND": "-DUNSEEN=1"})
        assert r.rc == 0, r.err
        assert json.loads(r.out)["totals"]["cache_hits"] == 0, attempt
        assert "HIPRTC_COMPILE_OPTIONS_APPEND" in r.err, r.err
