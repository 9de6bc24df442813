# SPDX-License-Identifier: MIT
# test_examples.py - warms the whole examples directory and part of its manifest for two archs,
# and inspects the code objects it wrote.
import json

import pytest

from conftest import EXAMPLES

ARCHS = ["gfx90a", "gfx1030"]
MANIFEST_SUBSET = ["bias_gelu.hip", "scale.hip", "reduce_sum.hip"]  # header, templates, -D


def expected_kernels(entry, lowered):
    return sorted(entry["functions"] + lowered)


@pytest.fixture(scope="module")
def directory_run(cli_path, backend_usable, tmp_path_factory):
    import subprocess

    from conftest import base_env

    tmp = tmp_path_factory.mktemp("examples")
    completed = subprocess.run(
        [cli_path, "warmup", str(EXAMPLES), "--arch", ",".join(ARCHS), "--json",
         str(tmp / "report.json"), "-o", str(tmp / "objects")],
        capture_output=True, text=True, env=base_env(tmp / "cache"), check=False)
    assert completed.returncode == 0, completed.stderr
    return {"report": json.loads((tmp / "report.json").read_text()),
            "objects": tmp / "objects", "stdout": completed.stdout}


def test_directory_warms_every_example_for_both_archs(directory_run, manifest):
    doc = directory_run["report"]
    sources = sorted(e["source"] for e in manifest["kernels"])
    assert doc["totals"]["kernels"] == len(sources) * len(ARCHS)
    assert doc["totals"]["failed"] == 0
    # Arch-major, each arch's kernels sorted by path: deterministic order.
    for i, arch in enumerate(ARCHS):
        rows = doc["kernels"][i * len(sources):(i + 1) * len(sources)]
        assert [r["arch"] for r in rows] == [arch] * len(sources)
        assert [r["path"].rsplit("/", 1)[-1] for r in rows] == sources
    by_source = {e["source"]: e for e in manifest["kernels"]}
    for row in doc["kernels"]:
        entry = by_source[row["path"].rsplit("/", 1)[-1]]
        if not entry["name_expressions"]:
            assert row["kernels"] == sorted(entry["functions"]), row["path"]
        else:
            assert len(row["kernels"]) == len(entry["functions"]) + len(entry["name_expressions"])
    assert "compiler runs in " in directory_run["stdout"]
    assert "speedup" not in directory_run["stdout"]


def test_manifest_entries_warm_like_the_files_themselves(run, directory_run, manifest, tmp_path):
    # A manifest with absolute sources and headers, taking a few entries of the real one.
    subset = [dict(e) for e in manifest["kernels"] if e["source"] in MANIFEST_SUBSET]
    for entry in subset:
        entry["source"] = str(EXAMPLES / entry["source"])
        entry["headers"] = {name: str(EXAMPLES / path) for name, path in entry["headers"].items()}
    path = tmp_path / "subset.json"
    path.write_text(json.dumps({"schema": manifest["schema"], "kernels": subset}))
    r = run("warmup", path, "--arch", ",".join(ARCHS), "--json", "-", "-q")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["totals"]["kernels"] == len(subset) * len(ARCHS)
    # Same request as the directive-driven run: the same content key.
    keys = {(row["path"], row["arch"]): row["key"] for row in directory_run["report"]["kernels"]}
    for row in doc["kernels"]:
        assert keys[(row["path"], row["arch"])] == row["key"], row["path"]


def test_the_real_manifest_is_accepted(run, backend_usable):
    # Input checking only: an unknown arch stops it before anything compiles.
    r = run("warmup", EXAMPLES / "manifest.json", "--arch", "gfx9999")
    assert r.rc == 2
    assert "arch 'gfx9999'" in r.err


@pytest.mark.parametrize("arch", ARCHS)
def test_inspect_lists_the_kernels_of_every_code_object(run, directory_run, manifest, arch):
    lowered = {(r["path"].rsplit("/", 1)[-1], r["arch"]): r["kernels"]
               for r in directory_run["report"]["kernels"]}
    for entry in manifest["kernels"]:
        stem = entry["source"][:-len(".hip")]
        r = run("inspect", "--json", directory_run["objects"] / f"{stem}.{arch}.co")
        assert r.rc == 0, r.err
        doc = r.json()
        assert doc["schema"] == "hipacm-inspect-1"
        assert doc["machine"] == 224 and doc["machine_name"] == "AMDGPU"
        assert doc["arch"] == arch
        assert doc["size"] > 0
        if entry["name_expressions"]:
            assert doc["kernels"] == lowered[(entry["source"], arch)]
            assert all(name.startswith("_Z") for name in doc["kernels"])
        else:
            assert doc["kernels"] == sorted(entry["functions"])


def test_inspect_text_output(run, directory_run):
    r = run("inspect", directory_run["objects"] / "activations.gfx1030.co")
    assert r.rc == 0, r.err
    assert "machine  AMDGPU (e_machine 224)" in r.out
    assert "arch     gfx1030" in r.out
    assert "kernels  2\n    gelu_f32\n    relu_f32\n" in r.out
