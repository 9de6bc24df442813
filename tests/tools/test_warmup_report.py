# SPDX-License-Identifier: MIT
# test_warmup_report.py - hipacm warmup reports what it measured: counts, wall time, parallelism,
# a measured serial run on request, diagnostics under the user's file names, stored failures.
import json

import pytest

from conftest import EXAMPLES


def warm(run, *args):
    r = run("warmup", *args, "--arch", "gfx90a", "-q", "--json", "-")
    return r, (json.loads(r.out) if r.out.strip() else None)


def test_the_summary_claims_no_speedup_it_did_not_measure(run, backend_usable):
    r, doc = warm(run, EXAMPLES / "saxpy.hip", EXAMPLES / "vector_add.hip", "--jobs", "2")
    assert r.rc == 0, r.err
    assert doc["schema"] == "hipacm-warmup-report-2"
    assert "speedup" not in r.err and "speedup" not in doc["totals"]
    assert doc["serial"] is None
    assert doc["jobs"] == 2 and doc["max_parallel"] == 2
    assert doc["totals"]["compiled"] == 2
    assert "2 compiler runs in " in r.err and "up to 2 at a time per arch" in r.err
    assert "ratio" not in r.err


def test_compare_serial_measures_a_serial_run(run, backend_usable, cache_dir):
    r, doc = warm(run, EXAMPLES / "saxpy.hip", EXAMPLES / "scale.hip", "--compare-serial")
    assert r.rc == 0, r.err
    serial = doc["serial"]
    # The serial run compiled every kernel itself: the cache was off for it.
    assert serial["kernels"] == 2 and serial["compiled"] == 2 and serial["failed"] == 0
    assert serial["wall_seconds"] > 0
    assert doc["totals"]["cache_hits"] == 0
    assert serial["ratio"] == pytest.approx(serial["wall_seconds"] / doc["totals"]["wall_seconds"])
    assert "serial run (cache off, 1 at a time): 2 compiled, 0 failed" in r.err
    assert "measured: serial " in r.err
    # Now the parallel run is served from the cache: no ratio, since the runs did different work.
    r, doc = warm(run, EXAMPLES / "saxpy.hip", EXAMPLES / "scale.hip", "--compare-serial")
    assert r.rc == 0, r.err
    assert doc["totals"]["cache_hits"] == 2
    assert doc["serial"]["compiled"] == 2 and doc["serial"]["ratio"] is None
    assert "no ratio: the parallel run took 2 of 2 kernels from the cache" in r.err


def test_compare_serial_and_dry_run_exclude_each_other(run):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--compare-serial", "--dry-run")
    assert r.rc == 2


BROKEN = ('#include "helper.h"\n'
          'extern "C" __global__ void broken(float* x) {\n'
          '  x[0] = helper() + undefined_name;\n'
          '}\n')


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_diagnostics_name_the_users_files(run, backend_usable, tmp_path, isolation):
    (tmp_path / "helper.h").write_text("inline __device__ float helper() { return nope; }\n")
    kernel = tmp_path / "saxpy_broken.hip"
    kernel.write_text("// hipacm: header=helper.h\n" + BROKEN)
    r = run("warmup", kernel, "--arch", "gfx90a", "-q", "--json", "-", "--log-lines", "100",
            env={"HIPACM_ISOLATION": isolation})
    assert r.rc == 1
    (entry,) = json.loads(r.out)["kernels"]
    for text in (r.err, entry["log"]):
        assert "saxpy_broken.hip:4:" in text  # line 4: the directive line comes first
        assert "helper.h:1:" in text
        assert "/tmp/comgr-" not in text and "comgr-" not in text
        assert "CompileSource" not in text
    assert "undeclared identifier 'undefined_name'" in entry["log"]


def test_the_reports_log_is_bounded(run, backend_usable, tmp_path):
    path = tmp_path / "many_errors.hip"
    body = "\n".join(f"  x[{i}] = missing_{i};" for i in range(60))
    path.write_text('extern "C" __global__ void k(float* x) {\n' + body + "\n}\n")
    r, doc = warm(run, path)
    assert r.rc == 1
    (entry,) = doc["kernels"]
    log = entry["log"]
    lines = log.splitlines()
    assert len(lines) <= 41 and len(log.encode()) <= 8 * 1024 + 100
    assert lines[0].startswith("many_errors.hip:2:")
    assert "more bytes of the log left out" in lines[-1]
    assert doc["kernels"][0]["status"] == "failed"


def test_a_successful_kernel_has_no_log_in_the_report(run, backend_usable):
    r, doc = warm(run, EXAMPLES / "saxpy.hip")
    assert r.rc == 0, r.err
    assert doc["kernels"][0]["log"] is None


def test_cache_failures_serves_a_stored_failure(run, backend_usable, broken_kernel, cache_dir):
    # Needs the plugin's negative cache (hipacm_mode_config.cache_failures, ABI 1.4).
    first, doc = warm(run, broken_kernel, "--cache-failures")
    assert first.rc == 1
    assert doc["cache_failures"] is True
    assert doc["totals"]["failed"] == 1 and doc["totals"]["failed_from_cache"] == 0
    second, doc = warm(run, broken_kernel, "--cache-failures")
    assert second.rc == 1
    (entry,) = doc["kernels"]
    assert entry["status_code"] == "HIPACM_ERROR_COMPILATION"
    assert doc["totals"]["failed_from_cache"] == 1, "the plugin did not serve the stored failure"
    assert "undeclared identifier 'undefined_name'" in entry["log"]
    assert "1 failed from stored failures (--cache-failures)" in second.err
    # Without the flag the stored failure is not served: the kernel compiles (and fails) again.
    third, doc = warm(run, broken_kernel)
    assert third.rc == 1
    assert doc["cache_failures"] is False and doc["totals"]["failed_from_cache"] == 0


def test_cache_failures_needs_the_cache(run):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--cache-failures",
            "--no-cache")
    assert r.rc == 2


def test_nvrtc_diagnostics_name_the_users_files(run, backend_usable, broken_kernel):
    import rocm_facts

    if not rocm_facts.nvrtc_loadable():
        pytest.skip("no NVRTC here")
    r = run("warmup", broken_kernel, "--arch", "sm_80", "-q", "--json", "-")
    assert r.rc == 1
    (entry,) = json.loads(r.out)["kernels"]
    assert 'broken.hip(1): error: identifier "undefined_name" is undefined' in entry["log"]
    assert "CompileSource" not in entry["log"]


def test_tables_stay_aligned_for_long_arch_names(run, backend_usable):
    long_arch = "gfx90a:sramecc+:xnack-"
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", f"{long_arch},gfx1030", "--no-cache")
    assert r.rc == 0, r.err
    table = [line for line in r.out.splitlines()
             if line.split()[:1] in (["arch"], [long_arch], ["gfx1030"], ["total"])]
    assert len(table) == 4, r.out
    # Every column ends where the header's does.
    ends = {len(line) for line in table}
    assert len(ends) == 1, "\n".join(table)
    assert table[1].startswith(long_arch + " ")
    listed = run("warmup", EXAMPLES / "saxpy.hip", "--arch", f"{long_arch},gfx1030", "--no-cache",
                 "--dry-run")
    assert listed.rc == 0, listed.err
    rows = [line for line in (listed.out + listed.err).splitlines()
            if line.startswith("compile ")]
    assert len(rows) == 2
    assert len({line.index(str(EXAMPLES / "saxpy.hip")) for line in rows}) == 1, "\n".join(rows)
