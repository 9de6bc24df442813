# SPDX-License-Identifier: MIT
"""Isolation and timeout reach the plugin: hipacm-worker's test-only fault
hooks hang or crash process-isolated compiles, which in-process compiles never
see. Runs in a fresh interpreter so that new workers inherit the hooks."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import hipacm

SCRIPT = textwrap.dedent(r'''
    import json, hipacm
    SRC = 'extern "C" __global__ void k(float* a) { a[threadIdx.x] += 1.0f; }\n'
    out = {}
    for isolation in ("process", "in-process"):
        with hipacm.AsyncCompileMode(2, arch="gfx90a", isolation=isolation, timeout=1.0,
                                     ignore_errors=True) as mode:
            hang = mode.submit(None, "// @HANG@\n" + SRC)
            crash = mode.submit(None, "// @SEGV@\n" + SRC)
        for name, fut in (("hang", hang), ("crash", crash)):
            out[f"{isolation}/{name}"] = fut.status.name
    print(json.dumps(out))
''')


def test_isolation_and_timeout_reach_the_plugin():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(hipacm.__file__).resolve().parents[1])
    env["HIPACM_LIBRARY"] = hipacm.library_path
    env["HIPACM_TEST_HOOKS"] = "1"
    env["HIPACM_WORKER_FAULT"] = "hang:when=@HANG@,crash-segv:when=@SEGV@"
    # The script chooses the isolation; where workers come from (the service= part) stays ours.
    service = [p for p in env.pop("HIPACM_ISOLATION", "").split(",") if p.startswith("service=")]
    if service:
        env["HIPACM_ISOLATION"] = service[-1]
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {
        "process/hang": "TIMEOUT",
        "process/crash": "COMPILER_CRASHED",
        "in-process/hang": "SUCCESS",
        "in-process/crash": "SUCCESS",
    }
