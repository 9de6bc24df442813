# SPDX-License-Identifier: MIT
# test_record.py - HIPACM_RECORD end to end: a Python host records what it compiles, `hipacm
# warmup FILE` replays it into another cache, and the host then gets every request from there.
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import CLI, base_env

REPO = Path(__file__).resolve().parents[2]
ARCH = "gfx90a"

# The host: submits KERNELS (one twice) to a mode and compiles one more without a mode, then
# prints each request's key and from_cache as JSON.
HOST = r'''
import json, sys
import hipacm

kernels = json.loads(sys.argv[2])
results = []
with hipacm.AsyncCompileMode(2, cache=sys.argv[1]) as mode:
    futures = [mode.submit(None, k["source"], name=k["name"], options=k["options"],
                           headers=dict(k["headers"]), name_expressions=k["names"])
               for k in kernels[:-1] + [kernels[0]]]
    kernels_done = [f.result() for f in futures]
results = [{"key": k.key, "from_cache": bool(k.from_cache)} for k in kernels_done]
last = kernels[-1]
# Without a mode the cache directory is $HIPACM_CACHE_DIR, which names the same one.
sync = hipacm.compile(last["source"], arch="gfx90a", name=last["name"], options=last["options"],
                      headers=dict(last["headers"]), name_expressions=last["names"])
results.append({"key": sync.key, "from_cache": bool(sync.from_cache)})
print(json.dumps(results))
'''

KERNELS = [
    {"name": "vadd.hip", "options": [], "headers": [], "names": [],
     "source": 'extern "C" __global__ void vadd(float* a, const float* b, int n) {\n'
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n) a[i] += b[i];\n}\n"},
    {"name": "scale.hip", "options": ["-O2", "-DFACTOR=3"],
     "headers": [["factor.h", "#define TIMES(x) ((x) * FACTOR)\n"],
                 ["util/empty.h", '// "quoted", a tab\tand a backslash \\\n']],
     "names": ["scale<float>", "scale<double>"],
     "source": '#include "factor.h"\n'
               "template <typename T> __global__ void scale(T* x, int n) {\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
               "  if (i < n) x[i] = TIMES(x[i]);\n}\n"},
    {"name": "kernel.hip", "options": ["-DUNUSED=1"], "headers": [], "names": [],
     "source": 'extern "C" __global__ void fill(int* p) { p[threadIdx.x] = 7; }\n'},
    {"name": "sync.hip", "options": [], "headers": [["k.h", "#define K 5\n"]], "names": [],
     "source": '#include "k.h"\nextern "C" __global__ void sync_fill(int* p) { p[0] = K; }\n'},
]


def sanitizer_runtime(library):
    """The ASan runtime a sanitized build's library needs first in an uninstrumented process."""
    linked = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=False)
    for line in linked.stdout.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("libasan.so") and len(parts) >= 3:
            return parts[2]
    return None


def run_host(tmp_path, cache, record=None):
    env = base_env(cache)
    library = Path(CLI).resolve().parent / "libhipacm.so.1"
    env["HIPACM_LIBRARY"] = str(library)
    runtime = sanitizer_runtime(library)
    if runtime is not None:
        # Python itself is not instrumented: the runtime must come first, and the interpreter's
        # own allocations at exit are not the plugin's leaks.
        env["LD_PRELOAD"] = runtime
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    env["PYTHONPATH"] = str(REPO / "bindings" / "python")
    env["HIPACM_ARCH"] = ARCH  # the mode's arch is resolved from it; the record must name it
    env.pop("HIPACM_RECORD", None)
    if record is not None:
        env["HIPACM_RECORD"] = str(record)
    script = tmp_path / "host.py"
    script.write_text(HOST)
    completed = subprocess.run([sys.executable, str(script), str(cache), json.dumps(KERNELS)],
                               capture_output=True, text=True, env=env, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_a_recorded_run_replays_into_a_cache_that_serves_every_request(
        run, backend_usable, tmp_path):
    record = tmp_path / "requests.jsonl"
    cache_a, cache_b = tmp_path / "cache-a", tmp_path / "cache-b"

    first = run_host(tmp_path, cache_a, record)
    assert [r["from_cache"] for r in first] == [False] * 5

    lines = record.read_text().splitlines()
    assert len(lines) == len(KERNELS), "the repeated submit is recorded once"
    assert os.stat(record).st_mode & 0o777 == 0o600
    for line, kernel in zip(lines, KERNELS):
        entry = json.loads(line)
        assert entry == {"schema": "hipacm-record-1", "arch": ARCH, "source_name": kernel["name"],
                         "options": kernel["options"], "name_expressions": kernel["names"],
                         "headers": [{"name": n, "source": s} for n, s in kernel["headers"]],
                         "source": kernel["source"]}

    # Replayed into an empty cache: exactly the recorded requests compile, under the same keys.
    r = run("warmup", record, "--arch", ARCH, "--cache-dir", cache_b, "--json",
            tmp_path / "report.json")
    assert r.rc == 0, r.err
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["totals"]["kernels"] == len(KERNELS) and doc["totals"]["failed"] == 0
    assert doc["totals"]["compiled"] == len(KERNELS) and doc["totals"]["cache_hits"] == 0
    recorded_keys = [r["key"] for r in first[:3]] + [first[4]["key"]]
    assert [k["key"] for k in doc["kernels"]] == recorded_keys

    # The host against the replayed cache: every request, with and without a mode, is a hit.
    second = run_host(tmp_path, cache_b)
    assert [r["from_cache"] for r in second] == [True] * 5
    assert [r["key"] for r in second] == [r["key"] for r in first]


def test_a_bad_record_line_is_an_input_error_naming_it(run, tmp_path):
    record = tmp_path / "requests.jsonl"
    good = {"schema": "hipacm-record-1", "arch": ARCH, "source_name": "a.hip", "source": "x"}
    record.write_text(json.dumps(good) + "\n" + '{"schema": "hipacm-record-1", "source": 3}\n')
    r = run("warmup", record, "--arch", ARCH)
    assert r.rc == 2
    assert "requests.jsonl:2" in r.err and "source" in r.err


def test_a_record_file_is_recognised_whatever_its_name(run, backend_usable, tmp_path):
    record = tmp_path / "app.record"
    line = {"schema": "hipacm-record-1", "arch": ARCH, "source_name": "one.hip",
            "source": 'extern "C" __global__ void one(int* p) { p[0] = 1; }\n'}
    record.write_text(json.dumps(line, separators=(",", ":")) + "\n")
    r = run("warmup", record, "--arch", ARCH, "--no-cache", "--json", tmp_path / "r.json")
    assert r.rc == 0, r.err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["totals"]["compiled"] == 1


def recorded(name, arch):
    return {"schema": "hipacm-record-1", "arch": arch, "source_name": f"{name}.hip",
            "source": f'extern "C" __global__ void {name}(int* p) {{ p[0] = 1; }}\n'}


def test_each_recorded_request_compiles_for_its_own_arch(run, backend_usable, tmp_path):
    record = tmp_path / "requests.jsonl"
    record.write_text("".join(json.dumps(recorded(name, arch)) + "\n"
                              for name, arch in (("a", "gfx90a"), ("b", "gfx1030"))))
    r = run("warmup", record, "--no-cache", "--json", tmp_path / "r.json")
    assert r.rc == 0, r.err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["archs"] == ["gfx90a", "gfx1030"]
    assert [(k["kernels"], k["arch"]) for k in doc["kernels"]] == [(["a"], "gfx90a"),
                                                                 (["b"], "gfx1030")]

    # --arch overrides: every recorded request compiles for every arch it names.
    r = run("warmup", record, "--no-cache", "--arch", "gfx90a", "--json", tmp_path / "r.json")
    assert r.rc == 0, r.err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [(k["kernels"], k["arch"]) for k in doc["kernels"]] == [(["a"], "gfx90a"),
                                                                 (["b"], "gfx90a")]
