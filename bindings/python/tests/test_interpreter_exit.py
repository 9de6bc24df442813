# SPDX-License-Identifier: MIT
"""The interpreter may exit while a mode is still active (e.g. in a daemon thread)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hipacm

SCRIPT = r'''
import threading, hipacm
entered = threading.Event()
def body():
    with hipacm.AsyncCompileMode(arch="gfx90a") as mode:
        mode.submit(None, 'extern "C" __global__ void k(int* p) { *p = 1; }')
        entered.set()
        threading.Event().wait()  # never exits the mode
threading.Thread(target=body, daemon=True).start()
entered.wait(60)
print("exiting")
'''


def test_interpreter_exit_with_an_active_mode_does_not_abort():
    env = dict(os.environ, PYTHONPATH=str(Path(hipacm.__file__).resolve().parents[1]),
               HIPACM_LIBRARY=hipacm.library_path)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.stdout.strip() == "exiting"
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
