# SPDX-License-Identifier: MIT
# test_report_schemas.py - every JSON document hipacm writes, made by the real commands with real
# compiles, validated against its schema in docs/schemas/ (and broken documents refused).
import copy
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import CLI, EXAMPLES, base_env

jsonschema = pytest.importorskip("jsonschema")  # Debian's python3-jsonschema (.ci/install-deps)

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
ARCH = "gfx90a"
MPIRUN = shutil.which("mpirun")
MPI_HELPER = Path(CLI).with_name("hipacm-mpi") if CLI else None
BROKEN = 'extern "C" __global__ void broken(float* x) { x[0] = undefined_name; }\n'


def load_schema(name):
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def closed(schema):
    """The schema with every object that lists its properties closed to others: the published
    schemas leave room for the keys a document version may gain, but the test insists that each
    key hipacm writes today is in its schema."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node.setdefault("additionalProperties", False)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(schema)
    return schema


def errors(document, name, strict=True):
    schema = load_schema(name)
    validator = jsonschema.Draft202012Validator(closed(schema) if strict else schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(document)]


def assert_valid(document, name):
    assert document["schema"] == name
    problems = errors(document, name)
    assert not problems, "\n".join(problems[:20])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """One set of real runs that every test reads: two example kernels and a broken one warmed
    (compiled, then from the cache), their code objects, a dry run with a miss, and the cache's
    documents. Made once: each compile costs seconds."""
    if not CLI or not os.access(CLI, os.X_OK):
        pytest.fail("set HIPACM_CLI to the built hipacm executable (CTest does)")
    root = tmp_path_factory.mktemp("schemas")
    cache = root / "cache"
    env = base_env(cache)
    doctor = subprocess.run([CLI, "doctor", "--json"], capture_output=True, text=True, env=env,
                            check=False)
    # Where the tool cannot run (no backend, or a library it needs is missing, as in a ROCm root
    # whose Debian lacks this build's libfmt), there is no document to check.
    if doctor.returncode != 0:
        pytest.skip("no compiler backend here: " + (doctor.stdout + doctor.stderr)[-400:])
    out = {"root": root, "cache": cache, "env": env, "doctor": json.loads(doctor.stdout)}

    def hipacm(*args, expect=0, extra=None):
        done = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True,
                              env=dict(env, **(extra or {})), timeout=600, check=False)
        assert done.returncode == expect, done.stdout + done.stderr
        return done

    kernels = root / "kernels"
    kernels.mkdir()
    for name in ("saxpy.hip", "vector_add.hip"):
        shutil.copy(EXAMPLES / name, kernels / name)
    (kernels / "broken.hip").write_text(BROKEN)
    objects = root / "objects"
    record = root / "requests.jsonl"
    # First run: two compiles and a failure (exit 1), the requests recorded.
    hipacm("warmup", kernels, "--arch", ARCH, "--json", root / "first.json", "-o", objects, "-q",
           expect=1, extra={"HIPACM_RECORD": str(record)})
    out["first"] = json.loads((root / "first.json").read_text())
    out["record"] = [json.loads(line) for line in record.read_text().splitlines()]
    # Second: the two good kernels again, both from the cache.
    out["second"] = json.loads(hipacm("warmup", kernels / "saxpy.hip", kernels / "vector_add.hip",
                                      "--arch", ARCH, "--json", "-", "-q").stdout)
    # A dry run with one kernel the cache lacks.
    shutil.copy(EXAMPLES / "reduce_sum.hip", kernels / "reduce_sum.hip")
    out["dry_run"] = json.loads(hipacm("warmup", kernels, "--arch", ARCH, "--dry-run",
                                       "--json", "-").stdout)
    code = sorted(objects.glob("*.co"))
    assert code, "warmup -o wrote no code object"
    out["inspect"] = json.loads(hipacm("inspect", code[0], "--json").stdout)
    listed = json.loads(hipacm("cache", "list", "--json").stdout)
    out["list"] = listed
    key = listed["entries"][0]["key"]
    out["inspect_key"] = json.loads(hipacm("inspect", key.split(":")[-1][:12], "--json").stdout)
    out["stats"] = json.loads(hipacm("cache", "stats", "--json").stdout)
    out["verify"] = json.loads(hipacm("cache", "verify", "--json").stdout)
    export = root / "export.hipacm"
    out["export"] = json.loads(hipacm("cache", "export", export, "--json").stdout)
    copy_cache = root / "copy"
    out["import"] = json.loads(hipacm("cache", "--db", copy_cache, "import", export,
                                      "--json").stdout)
    out["stats-reset"] = json.loads(hipacm("cache", "--db", copy_cache, "stats", "--reset",
                                           "--json").stdout)
    out["prune"] = json.loads(hipacm("cache", "--db", copy_cache, "prune", "--max-bytes", "1",
                                     "--json").stdout)
    out["clear"] = json.loads(hipacm("cache", "--db", copy_cache, "clear", "--json").stdout)
    out["empty_stats"] = json.loads(hipacm("cache", "--db", copy_cache, "stats",
                                           "--json").stdout)
    return out


def test_every_schema_is_valid_and_names_its_document():
    names = sorted(p.name[:-len(".schema.json")] for p in SCHEMAS.glob("*.schema.json"))
    assert len(names) >= 13
    for name in names:
        schema = load_schema(name)
        assert schema["properties"]["schema"] == {
            "const": name, "description": "the document's schema and version"}
        assert "schema" in schema["required"]
        assert f"`{name}`" in (SCHEMAS / "README.md").read_text(), f"{name} not in the README"


def test_warmup_reports_compiled_failed_and_cached(work):
    first, second = work["first"], work["second"]
    assert first["totals"]["compiled"] == 2 and first["totals"]["failed"] == 1
    assert second["totals"]["cache_hits"] == 2
    failed = [k for k in first["kernels"] if k["status"] == "failed"]
    assert failed and failed[0]["status_code"] == "HIPACM_ERROR_COMPILATION"
    assert_valid(first, "hipacm-warmup-report-2")
    assert_valid(second, "hipacm-warmup-report-2")


def test_dry_run_with_a_miss(work):
    dry = work["dry_run"]
    assert dry["totals"]["to_compile"] >= 2 and dry["totals"]["cached"] == 2  # broken, reduce_sum
    assert_valid(dry, "hipacm-warmup-dry-run-1")


def test_doctor(work):
    assert_valid(work["doctor"], "hipacm-doctor-1")


def test_inspect_of_a_file_and_of_a_cache_key(work):
    assert work["inspect"]["arch"] == ARCH and work["inspect"]["kernels"]
    assert_valid(work["inspect"], "hipacm-inspect-1")
    assert work["inspect_key"]["source"].startswith("cache:")
    assert_valid(work["inspect_key"], "hipacm-inspect-1")


@pytest.mark.parametrize("sub", ["stats", "stats-reset", "list", "verify", "export", "import",
                                 "prune", "clear"])
def test_cache_documents(work, sub):
    assert_valid(work[sub], f"hipacm-cache-{sub}-1")


def test_cache_stats_counts_the_misses_and_an_empty_cache_validates(work):
    assert work["stats"]["lookups"]["misses"] > 0 and work["stats"]["entries"] == 2
    assert work["empty_stats"]["entries"] == 0 and work["empty_stats"]["by_arch"] == []
    assert_valid(work["empty_stats"], "hipacm-cache-stats-1")


def test_record_lines(work):
    assert len(work["record"]) == 3
    for line in work["record"]:
        assert_valid(line, "hipacm-record-1")


def break_status(d):
    d["kernels"][0]["status"] = "okay"


def break_required(d):
    del d["totals"]["compiled"]


def break_type(d):
    d["totals"]["kernels"] = "3"


def break_consistency(d):
    ok = next(k for k in d["kernels"] if k["status"] == "ok")
    ok["error"] = "a success with an error"


def break_version(d):
    d["schema"] = "hipacm-warmup-report-1"


@pytest.mark.parametrize("breaking", [break_status, break_required, break_type,
                                      break_consistency, break_version])
def test_a_broken_report_fails_validation(work, breaking):
    document = copy.deepcopy(work["first"])
    breaking(document)
    assert errors(document, "hipacm-warmup-report-2")
    assert errors(document, "hipacm-warmup-report-2", strict=False)


def test_an_unknown_key_fails_only_the_strict_check(work):
    """The published schemas accept keys a version gains later; the test's closed form refuses a
    key hipacm writes that its schema does not describe."""
    document = copy.deepcopy(work["stats"])
    document["lookups"]["no_such_key"] = 3
    assert not errors(document, "hipacm-cache-stats-1", strict=False)
    assert errors(document, "hipacm-cache-stats-1")


@pytest.mark.skipif(MPIRUN is None or MPI_HELPER is None or not MPI_HELPER.exists(),
                    reason="needs mpirun and a build with hipacm-mpi (HIPACM_WITH_MPI)")
def test_mpi_job_report(work):
    """Two ranks warm the two kernels and the broken one: rank 0's report of the whole job, its
    `mpi` part and the failure included."""
    root = work["root"]
    kernels = root / "mpi-kernels"
    kernels.mkdir()
    for name in ("saxpy.hip", "vector_add.hip"):
        shutil.copy(EXAMPLES / name, kernels / name)
    (kernels / "broken.hip").write_text(BROKEN)
    env = dict(work["env"], OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("HIPACM_CACHE_DIR", None)
    report = root / "mpi.json"
    done = subprocess.run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", "2", CLI,
                           "warmup", "--mpi", kernels, "--arch", ARCH, "--jobs", "1",
                           "--cache-dir", root / "mpi-cache-%r", "--json", report, "-q"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # the broken kernel
    document = json.loads(report.read_text())
    assert document["mpi"]["ranks"] == 2 and len(document["mpi"]["per_rank"]) == 2
    assert document["totals"]["failed"] == 1
    assert_valid(document, "hipacm-warmup-report-2")
    broken = copy.deepcopy(document)
    broken["mpi"]["per_rank"][1]["bytes_sent"] = -1
    assert errors(broken, "hipacm-warmup-report-2", strict=False)
