# SPDX-License-Identifier: MIT
"""A typed user's code of the concurrent.futures, error-group, status and
progress API passes mypy --strict, so that a typing regression fails here."""

from test_typing import mypy

USER = '''
import concurrent.futures as cf
from typing import Dict, List, Optional, Set, Tuple

import hipacm


def report(done: int, total: int) -> None:
    print(f"{done}/{total}")


def warm(sources: Dict[str, str]) -> Tuple[List[bytes], List[str]]:
    failed: List[str] = []
    futures: List[hipacm.FutureKernel] = []
    try:
        with hipacm.AsyncCompileMode(arch="gfx90a", progress=report) as mode:
            futures = [mode.submit(key, src) for key, src in sources.items()]
            done: Set["cf.Future[hipacm.Kernel]"] = cf.wait(futures, timeout=60).done
            for f in cf.as_completed(futures):
                error: Optional[BaseException] = f.exception(timeout=1.5)
                kernel: hipacm.Kernel = f.result(timeout=1.5)
                print(kernel.code[:4], error, len(done))
            futures[0].add_done_callback(lambda f: print(f.done()))
    except hipacm.CompilationErrorGroup as group:
        errors: List[hipacm.CompilationError] = group.errors
        failed = [e.key + ":" + e.status.name for e in errors]
        print(group.total, group.status.name, len(group.exceptions))
    except hipacm.CompilationError as e:
        name: str = e.status.name
        failed = [name]
    except hipacm.HipacmError as e:
        failed = [e.status.name]
    status: hipacm.Status = futures[0].status
    cancelled: bool = futures[0].cancel()
    print(status.name, cancelled, futures[0].running())
    return [f.result().code for f in futures], failed
'''

WRONG_PROGRESS = '''
import hipacm

mode = hipacm.AsyncCompileMode(progress=lambda done: None)
'''


def test_user_code_of_the_new_api_type_checks(tmp_path):
    good = tmp_path / "user.py"
    good.write_text(USER)
    proc = mypy(tmp_path, str(good))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_progress_callback_of_the_wrong_shape_is_a_type_error(tmp_path):
    bad = tmp_path / "wrong_progress.py"
    bad.write_text(WRONG_PROGRESS)
    proc = mypy(tmp_path, str(bad))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'Argument "progress" to "AsyncCompileMode" has incompatible type' in proc.stdout, \
        proc.stdout
