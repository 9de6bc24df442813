# SPDX-License-Identifier: MIT
# test_warmup_inputs.py - hipacm warmup's run-wide inputs: -I, -D, --option, --ext, and --dry-run.
import json
import os

from conftest import EXAMPLES

NEEDS_SCALE = ('#ifndef SCALE\n#error SCALE is not defined\n#endif\n'
               'extern "C" __global__ void k(float* x) { x[0] *= SCALE; }\n')


def warm(run, *args):
    r = run("warmup", *args, "--arch", "gfx90a", "-q", "--json", "-")
    return r, (json.loads(r.out) if r.out.strip() else None)


def test_include_dir_finds_a_header_on_disk(run, backend_usable, tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    (include / "factor.h").write_text("#define FACTOR 3.0f\n")
    kernel = tmp_path / "k.hip"
    kernel.write_text('#include "factor.h"\n'
                      'extern "C" __global__ void k(float* x) { x[0] *= FACTOR; }\n')
    r, doc = warm(run, kernel)
    assert r.rc == 1 and "'factor.h' file not found" in doc["kernels"][0]["log"]
    # A relative directory works too: compiles run elsewhere, so it is made absolute.
    relative = os.path.relpath(include, os.getcwd())
    r, doc = warm(run, kernel, "-I", relative)
    assert r.rc == 0, r.err
    assert doc["common_options"] == ["-I" + str(include)]
    assert doc["kernels"][0]["options"] == ["-I" + str(include)]
    assert doc["kernels"][0]["kernels"] == ["k"]


def test_include_dir_must_exist(run, tmp_path):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-I", tmp_path / "absent")
    assert r.rc == 2 and "not a directory" in r.err


def test_define_and_option_reach_every_kernel(run, backend_usable, tmp_path):
    for name in ("a.hip", "b.hip"):
        (tmp_path / name).write_text(NEEDS_SCALE)
    r, doc = warm(run, tmp_path)
    assert r.rc == 1 and doc["totals"]["failed"] == 2
    assert "SCALE is not defined" in doc["kernels"][0]["log"]
    r, doc = warm(run, tmp_path, "-D", "SCALE=2.0f", "--option=-O2")
    assert r.rc == 0, r.err
    assert doc["totals"]["compiled"] == 2
    for kernel in doc["kernels"]:
        assert kernel["options"] == ["-DSCALE=2.0f", "-O2"]
    # The run's options come before a kernel's own.
    r, doc = warm(run, EXAMPLES / "saxpy.hip", "-DSCALE")
    assert r.rc == 0, r.err
    assert doc["kernels"][0]["options"][0] == "-DSCALE"


def test_bad_define_exits_2(run):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "-D", "=1")
    assert r.rc == 2 and "NAME an identifier" in r.err


def test_ext_picks_the_files_of_a_directory(run, backend_usable, tmp_path):
    body = 'extern "C" __global__ void {}(float* x) {{ x[0] = 1.0f; }}\n'
    (tmp_path / "a.cpp").write_text(body.format("a"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.cu").write_text(body.format("b"))
    (tmp_path / "c.hip").write_text(body.format("c"))
    (tmp_path / "notes.txt").write_text("not a kernel\n")
    r, doc = warm(run, tmp_path)
    assert r.rc == 0, r.err
    assert [k["kernels"] for k in doc["kernels"]] == [["c"]]
    r, doc = warm(run, tmp_path, "--ext", ".cpp,cu")
    assert r.rc == 0, r.err
    assert [os.path.basename(k["path"]) for k in doc["kernels"]] == ["a.cpp", "b.cu"]
    assert [k["kernels"] for k in doc["kernels"]] == [["a"], ["b"]]


def test_ext_without_matches_and_bad_ext_exit_2(run, tmp_path):
    (tmp_path / "c.hip").write_text('extern "C" __global__ void c() {}\n')
    r = run("warmup", tmp_path, "--arch", "gfx90a", "--ext", ".cu")
    assert r.rc == 2 and "no .cu files below it" in r.err
    for bad in (".json", ",", "a/b"):
        r = run("warmup", tmp_path, "--arch", "gfx90a", "--ext", bad)
        assert r.rc == 2, bad


def cache_entries(run):
    return run("cache", "stats", "--json").json()["entries"]


def test_dry_run_lists_what_would_compile_and_compiles_nothing(run, backend_usable, tmp_path):
    kernels = [EXAMPLES / "saxpy.hip", EXAMPLES / "scale.hip"]
    r = run("warmup", *kernels, "--arch", "gfx90a", "--dry-run", "--json", "-")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["schema"] == "hipacm-warmup-dry-run-1"
    assert doc["totals"] == {"kernels": 2, "cached": 0, "to_compile": 2}
    r, warm_doc = warm(run, *kernels)
    assert r.rc == 0, r.err
    assert warm_doc["totals"]["compiled"] == 2
    assert cache_entries(run) == 2
    before = run("cache", "stats", "--json").json()

    new = tmp_path / "new_kernel.hip"
    new.write_text('extern "C" __global__ void fresh(float* x) { x[0] = 2.0f; }\n')
    r = run("warmup", *kernels, "--arch", "gfx90a", "--dry-run")
    assert r.rc == 0, r.err
    assert "dry run: 0 to compile, 2 from the cache, 2 in all" in r.out
    r = run("warmup", *kernels, new, "--arch", "gfx90a", "--dry-run", "--json", "-")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["totals"] == {"kernels": 3, "cached": 2, "to_compile": 1}
    assert [k["cached"] for k in doc["kernels"]] == [True, True, False]
    assert "compile  gfx90a   " + str(new) in r.err
    # Nothing was compiled or stored: the cache still holds two entries, and the new kernel still
    # needs compiling.
    after = run("cache", "stats", "--json").json()
    assert after["entries"] == 2
    # Not even a lookup count was written.
    assert (after["hits"], after["lookups"]) == (before["hits"], before["lookups"])
    r = run("warmup", new, "--arch", "gfx90a", "--dry-run")
    assert "dry run: 1 to compile, 0 from the cache" in r.out
    # Another arch has nothing cached yet.
    r = run("warmup", *kernels, "--arch", "gfx1030", "--dry-run")
    assert "dry run: 2 to compile, 0 from the cache" in r.out
    r = run("warmup", *kernels, "--arch", "gfx90a", "--dry-run", "--no-cache")
    assert "dry run: 2 to compile, 0 from the cache" in r.out


def test_repeatable_options_before_the_paths_leave_the_paths_alone(run, tmp_path):
    # Each of these takes one value per use: the directory after them is still the path.
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k(float* x) { x[0] = 1; }\n')
    r = run("warmup", "--arch", "gfx90a", "-a", "gfx1030", "-I", tmp_path, "-D", "X=1", "-D", "Y",
            "--option=-O2", "--ext", ".hip", "--ext", ".cu", EXAMPLES, tmp_path,
            "--dry-run", "--json", "-")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    kernels = doc["kernels"]
    assert {k["arch"] for k in kernels} == {"gfx90a", "gfx1030"}
    hip_files = len(list(EXAMPLES.glob("*.hip")))
    assert len(kernels) == 2 * (hip_files + 1)
    assert all(k["options"][:4] == ["-I" + str(tmp_path), "-DX=1", "-DY", "-O2"] for k in kernels)
