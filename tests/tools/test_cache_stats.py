# SPDX-License-Identifier: MIT
# test_cache_stats.py - the counters `hipacm cache stats` shows (hits, misses, stored failures
# served, errors and passthroughs by kind), moved by real compiles, and `cache stats --reset`.
import os
import re
import sqlite3

import pytest

from conftest import EXAMPLES

SAXPY = EXAMPLES / "saxpy.hip"
NOBODY = 65534


def warmup(run, *paths, failures=False):
    args = ["warmup", *paths, "--arch", "gfx90a", "-q"] + (["--cache-failures"] if failures else [])
    return run(*args).rc


def stats(run, *extra):
    r = run("cache", "stats", "--json", *extra)
    assert r.rc == 0, r.err
    return r.json()


@pytest.fixture
def counted_cache(run, backend_usable, tmp_path, broken_kernel):
    """A cache that saw one hit, two misses, one compile error, one stored failure served and one
    passthrough, each through a real compile."""
    assert warmup(run, SAXPY) == 0                            # miss
    assert warmup(run, SAXPY) == 0                            # hit
    assert warmup(run, broken_kernel, failures=True) == 1     # miss, compile error, stored
    assert warmup(run, broken_kernel, failures=True) == 1     # the stored failure served
    computed = tmp_path / "computed.hip"
    computed.write_text('#define RUNTIME <hip/hip_runtime.h>\n#include RUNTIME\n'
                        'extern "C" __global__ void computed(float* x) { x[0] = 1.0f; }\n')
    warmup(run, computed)  # a computed #include: compiled without the cache
    return computed


def test_counters_move_with_real_compiles(run, counted_cache):
    doc = stats(run)
    assert doc["schema"] == "hipacm-cache-stats-1"
    assert doc["lookups"] == {"hits": 1, "misses": 2, "hit_rate": pytest.approx(1 / 3)}
    assert doc["stored_failure_hits"] == 1
    assert doc["errors"] == {"total": 1, "compilation": 1, "compiler_crashed": 0, "timed_out": 0,
                             "other": 0}
    assert doc["passthroughs"] == {"total": 1, "uncacheable": 1, "no_compiler_version": 0}
    assert doc["recorded_since_us"] is None
    assert doc["entries"] == 1 and doc["stored_failures"] == 1 and doc["hits"] == 1


def test_the_text_shows_every_counter(run, counted_cache):
    r = run("cache", "stats")
    assert r.rc == 0, r.err
    text = r.out
    assert "hit rate  33.3% (1 of 3 lookups)" in text
    assert "recorded since the cache was made" in text
    expected = [(r"  hits", r"1  \(33\.3%\)"), (r"  misses", r"2  \(66\.7%\)"),
                (r"  stored failures served", "1"), (r"  errors", "1"), (r"    compilation", "1"),
                (r"    compiler crashed", "0"), (r"    timed out", "0"), (r"    other", "0"),
                (r"  passthroughs", "1"), (r"    uncacheable", "1"),
                (r"    no compiler version", "0")]
    for label, value in expected:
        assert re.search("^" + label + r" +" + value + "$", text, re.M), (label, text)
    # -q keeps the counts and drops the heading.
    quiet = run("cache", "stats", "-q").out
    assert "recorded since" not in quiet and re.search(r"^  errors +1$", quiet, re.M), quiet


def test_reset_zeroes_the_counters_and_keeps_the_entries(run, counted_cache, cache_dir):
    before = stats(run)
    r = run("cache", "stats", "--reset", "--json")
    assert r.rc == 0, r.err
    doc = r.json()
    assert doc["schema"] == "hipacm-cache-stats-reset-1"
    assert doc["path"] == str(cache_dir / "kernels.sqlite3")
    assert doc["reset"] == {
        "hits": 1, "misses": 2, "stored_failure_hits": 1,
        "errors": {"total": 1, "compilation": 1, "compiler_crashed": 0, "timed_out": 0,
                   "other": 0},
        "passthroughs": {"total": 1, "uncacheable": 1, "no_compiler_version": 0},
        "entry_hits": 1, "entries_with_hits": 1}
    assert "entries" in doc["kept"] and "stored_failures" in doc["kept"]
    after = stats(run)
    assert after["lookups"] == {"hits": 0, "misses": 0, "hit_rate": None}
    assert after["stored_failure_hits"] == 0
    assert after["errors"]["total"] == 0 and after["passthroughs"]["total"] == 0
    assert after["hits"] == 0 and all(a["hits"] == 0 for a in after["by_arch"])
    assert after["recorded_since_us"] == doc["zeroed_us"]
    # Facts, not counters: kept.
    for kept in ("entries", "payload_bytes", "stored_failures"):
        assert after[kept] == before[kept], kept
    assert "recorded since " in run("cache", "stats").out
    assert re.search(r"recorded since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(zeroed\)",
                     run("cache", "stats").out)
    # Counting goes on from zero.
    assert warmup(run, SAXPY) == 0
    again = stats(run)
    assert again["lookups"]["hits"] == 1 and again["lookups"]["misses"] == 0


def test_reset_as_text_says_what_it_zeroed(run, counted_cache):
    r = run("cache", "stats", "--reset")
    assert r.rc == 0, r.err
    assert ("1 hits, 2 misses, 1 stored failures served, 1 errors, 1 passthroughs, and the hit "
            "counts of 1 entries (1 hits)") in r.out
    assert "kept: the entries" in r.out
    quiet = run("cache", "stats", "--reset", "-q")
    assert quiet.rc == 0 and len(quiet.out.splitlines()) == 1
    assert "0 hits, 0 misses" in quiet.out


def test_reset_of_a_cache_that_cannot_be_written_fails_and_changes_nothing(run, counted_cache,
                                                                           cache_dir):
    before = stats(run)
    if os.geteuid() == 0:
        os.chown(cache_dir, NOBODY, NOBODY)  # another user's cache, as root sees it
    else:
        cache_dir.chmod(0o500)
    try:
        r = run("cache", "stats", "--reset")
        after = stats(run)  # stats only reads: it works on such a cache
    finally:
        if os.geteuid() == 0:
            os.chown(cache_dir, 0, 0)
        cache_dir.chmod(0o700)
    assert r.rc == 2, r.out + r.err
    assert r.err.startswith("hipacm: error: cannot zero the statistics of " +
                            str(cache_dir / "kernels.sqlite3")), r.err
    assert "(nothing was changed)" in r.err
    assert r.out == ""
    assert after["lookups"] == before["lookups"]
    assert after["errors"] == before["errors"]


def test_reset_of_a_missing_cache_creates_nothing(run, tmp_path):
    r = run("cache", "--db", tmp_path / "none", "stats", "--reset")
    assert r.rc == 2 and "no cache at" in r.err
    assert not (tmp_path / "none").exists()


def test_a_cache_with_only_the_first_counters_reads_as_before(run, counted_cache, cache_dir):
    # A database from before the counters beyond hits and misses: its other rows are absent.
    with sqlite3.connect(cache_dir / "kernels.sqlite3") as db:
        db.execute("DELETE FROM meta WHERE name NOT IN ('schema_version', 'hits', 'misses')")
    doc = stats(run)
    assert doc["lookups"]["hits"] == 1 and doc["lookups"]["misses"] == 2
    assert doc["errors"]["total"] == 0 and doc["passthroughs"]["total"] == 0
    assert doc["stored_failure_hits"] == 0 and doc["recorded_since_us"] is None
    # Counting goes on from the rows that are there.
    assert warmup(run, EXAMPLES / "scale.hip") == 0  # a miss
    with sqlite3.connect(cache_dir / "kernels.sqlite3") as db:
        rows = dict(db.execute("SELECT name, value FROM meta").fetchall())
    assert rows["misses"] == "3"


def test_counter_rows_are_written_with_their_version(run, counted_cache, cache_dir):
    with sqlite3.connect(cache_dir / "kernels.sqlite3") as db:
        rows = dict(db.execute("SELECT name, value FROM meta").fetchall())
    assert rows["stats_version"] == "2"
    assert rows["errors.compilation"] == "1" and rows["passthroughs.uncacheable"] == "1"
    assert rows["failure_hits"] == "1"
    assert rows["schema_version"] == "1"  # the entries' layout, and so every key, is unchanged
