# SPDX-License-Identifier: MIT
# test_cache.py - the persistent cache through the real tool: warm twice, then every `cache`
# subcommand, tampering, export/import and two warmups racing on one cache.
import json
import os
import sqlite3
import subprocess

import pytest

from conftest import EXAMPLES, base_env

KERNELS = ["saxpy.hip", "vector_add.hip", "scale.hip"]
STATS_KEYS = {"schema": str, "path": str, "entries": int, "payload_bytes": int,
              "file_bytes": int, "hits": int, "by_arch": list}
ENTRY_KEYS = {"key": str, "arch": str, "source_name": str, "backend": str,
              "compiler_version": str, "plugin_version": str, "size": int, "created_us": int,
              "last_used_us": int, "hits": int}


def warm(run, tmp_path, name="report.json", *extra):
    report = tmp_path / name
    r = run("warmup", *[EXAMPLES / k for k in KERNELS], "--arch", "gfx90a", "--json", report,
            *extra)
    assert r.rc == 0, r.err
    return json.loads(report.read_text())


def db_path(cache_dir):
    return cache_dir / "kernels.sqlite3"


def test_second_warmup_is_served_from_the_cache(run, backend_usable, tmp_path):
    cold = warm(run, tmp_path, "cold.json")
    assert cold["totals"]["compiled"] == 3 and cold["totals"]["cache_hits"] == 0
    hot = warm(run, tmp_path, "hot.json")
    assert hot["totals"]["cache_hits"] == 3 and hot["totals"]["compiled"] == 0
    assert all(k["from_cache"] for k in hot["kernels"])
    # Identical keys and sizes: the same code objects came back.
    assert [(k["key"], k["code_size"]) for k in hot["kernels"]] == \
        [(k["key"], k["code_size"]) for k in cold["kernels"]]


def test_no_cache_compiles_every_time(run, backend_usable, tmp_path):
    warm(run, tmp_path, "one.json")
    again = warm(run, tmp_path, "two.json", "--no-cache")
    assert again["totals"]["cache_hits"] == 0 and again["totals"]["compiled"] == 3


def test_stats_and_list_json_schemas(run, backend_usable, tmp_path, cache_dir):
    warm(run, tmp_path)
    warm(run, tmp_path, "again.json")
    r = run("cache", "stats", "--json")
    assert r.rc == 0, r.err
    stats = r.json()
    for key, kind in STATS_KEYS.items():
        assert isinstance(stats[key], kind), key
    assert stats["schema"] == "hipacm-cache-stats-1"
    assert stats["path"] == str(db_path(cache_dir))
    assert stats["entries"] == 3 and stats["hits"] == 3 and stats["payload_bytes"] > 0
    assert [a["arch"] for a in stats["by_arch"]] == ["gfx90a"]
    assert stats["by_arch"][0]["entries"] == 3

    r = run("cache", "list", "--json")
    assert r.rc == 0, r.err
    entries = r.json()["entries"]
    assert len(entries) == 3
    for entry in entries:
        for key, kind in ENTRY_KEYS.items():
            assert isinstance(entry[key], kind), key
        assert entry["backend"] == "hiprtc" and entry["arch"] == "gfx90a"
    assert sorted(e["source_name"] for e in entries) == sorted(KERNELS)
    text = run("cache", "list")
    assert "3 entries in" in text.out


def test_inspect_by_key_prefix_lists_the_kernels(run, backend_usable, tmp_path):
    warm(run, tmp_path)
    entries = run("cache", "list", "--json").json()["entries"]
    saxpy = next(e for e in entries if e["source_name"] == "saxpy.hip")
    r = run("inspect", saxpy["key"][:16], "--json")
    assert r.rc == 0, r.err
    doc = r.json()
    assert doc["kernels"] == ["saxpy"] and doc["arch"] == "gfx90a"
    missing = run("inspect", "ffffffffffff")
    assert missing.rc == 2 and "no cache entry" in missing.err


def test_inspect_by_key_only_reads_the_cache(run, backend_usable, tmp_path, cache_dir):
    warm(run, tmp_path)
    key = run("cache", "list", "--json").json()["entries"][0]["key"]
    before = sorted(p.name for p in cache_dir.iterdir())
    cache_dir.chmod(0o500)
    try:
        # --db may name the cache's directory, as for `hipacm cache`.
        r = run("inspect", key[:16], "--db", cache_dir, env={"HIPACM_CACHE_DIR": str(tmp_path / "x")})
    finally:
        cache_dir.chmod(0o700)
    assert r.rc == 0, r.err
    assert key[:16] in r.out
    assert sorted(p.name for p in cache_dir.iterdir()) == before
    assert not (tmp_path / "x").exists()


def test_verify_finds_a_tampered_blob_and_remove_repairs_it(run, backend_usable, tmp_path,
                                                           cache_dir):
    warm(run, tmp_path)
    assert run("cache", "verify").rc == 0
    with sqlite3.connect(db_path(cache_dir)) as db:
        key, code = db.execute(
            "SELECT key, code FROM entries WHERE source_name = 'saxpy.hip'").fetchone()
        flipped = bytearray(code)
        flipped[len(flipped) // 2] ^= 0xFF
        db.execute("UPDATE entries SET code = ? WHERE key = ?", (bytes(flipped), key))
    r = run("cache", "verify", "--json")
    assert r.rc == 1
    report = r.json()
    assert report["checked"] == 3 and [b["key"] for b in report["bad"]] == [key]
    assert "checksum" in report["bad"][0]["reason"]
    r = run("cache", "verify", "--remove")
    assert r.rc == 0 and "1 removed" in r.out
    assert run("cache", "stats", "--json").json()["entries"] == 2
    # The next warmup recompiles exactly the removed kernel.
    again = warm(run, tmp_path, "again.json")
    assert again["totals"]["compiled"] == 1 and again["totals"]["cache_hits"] == 2


def test_export_import_round_trip_and_tampered_import(run, backend_usable, tmp_path):
    warm(run, tmp_path)
    exported = tmp_path / "kernels.hipacm"
    r = run("cache", "export", exported, "--arch", "gfx90a", "--json")
    assert r.rc == 0, r.err
    assert r.json()["exported"] == 3
    assert run("cache", "export", exported).rc == 2  # never overwrites

    fresh = tmp_path / "fresh.sqlite3"
    r = run("cache", "--db", fresh, "import", exported, "--json")
    assert r.rc == 0, r.err
    assert r.json()["accepted"] == 3 and r.json()["rejected"] == []
    original = {e["key"]: e["size"] for e in run("cache", "list", "--json").json()["entries"]}
    imported = {e["key"]: e["size"]
                for e in run("cache", "--db", fresh, "list", "--json").json()["entries"]}
    assert imported == original

    with sqlite3.connect(exported) as db:
        key, code = db.execute("SELECT key, code FROM entries LIMIT 1").fetchone()
        db.execute("UPDATE entries SET code = ? WHERE key = ?", (code[:-16], key))
    other = tmp_path / "other.sqlite3"
    r = run("cache", "--db", other, "import", exported, "--json")
    assert r.rc == 1
    assert [x["key"] for x in r.json()["rejected"]] == [key]
    assert r.json()["accepted"] == 2


def test_prune_and_clear(run, backend_usable, tmp_path):
    warm(run, tmp_path)
    r = run("cache", "prune", "--max-bytes", "0", "--json")
    assert r.rc == 0, r.err
    assert r.json()["removed"] == 3 and r.json()["entries"] == 0
    warm(run, tmp_path, "again.json")
    r = run("cache", "clear", "--json")
    assert r.rc == 0 and r.json()["removed"] == 3
    assert run("cache", "prune").rc == 2  # --max-bytes is required


def test_two_warmups_racing_on_one_cache_both_succeed(cli_path, backend_usable, tmp_path,
                                                      cache_dir):
    env = base_env(cache_dir)
    args = [cli_path, "warmup", str(EXAMPLES), "--arch", "gfx90a", "-q"]
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outcomes = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outcomes):
        assert p.returncode == 0, err
    verify = subprocess.run([cli_path, "cache", "verify", "--json"], env=env,
                            capture_output=True, text=True, check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    report = json.loads(verify.stdout)
    assert report["bad"] == []
    manifest = json.loads((EXAMPLES / "manifest.json").read_text())
    assert report["checked"] == len(manifest["kernels"])  # one entry per key


def test_four_warmups_of_the_same_kernels_compile_each_once_between_them(cli_path, backend_usable,
                                                                         tmp_path, cache_dir):
    env = base_env(cache_dir)
    runs = 4
    reports = [tmp_path / f"report{i}.json" for i in range(runs)]
    procs = [subprocess.Popen([cli_path, "warmup", str(EXAMPLES), "--arch", "gfx90a", "-q",
                               "--json", str(report)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for report in reports]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    totals = [json.loads(report.read_text())["totals"] for report in reports]
    kernels = totals[0]["kernels"]
    assert all(t["kernels"] == kernels and t["failed"] == 0 for t in totals), totals
    # Each kernel is compiled by one run; the other runs wait for it and report a cache hit.
    assert sum(t["compiled"] for t in totals) == kernels, totals
    assert sum(t["cache_hits"] for t in totals) == (runs - 1) * kernels, totals


def test_help_shows_an_example_for_every_cache_subcommand(run):
    for sub in ["stats", "list", "verify", "prune", "clear", "export", "import"]:
        r = run("cache", sub, "--help")
        assert r.rc == 0 and "Example" in r.out, sub


def test_trust02_export_to_a_dangling_symlink_exits_2_and_creates_nothing(run, backend_usable,
                                                                         tmp_path):
    warm(run, tmp_path)  # export refuses a missing cache before it looks at its target
    target = tmp_path / "elsewhere" / "victim.sqlite3"
    target.parent.mkdir()
    link = tmp_path / "export.hipacm"
    link.symlink_to(target)
    r = run("cache", "export", link)
    assert r.rc == 2
    assert "symbolic link" in r.err
    assert not target.exists()
    assert list(target.parent.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("export")) == \
        ["export.hipacm"]


def test_trust07_import_of_a_view_database_exits_2_with_the_reason(run, tmp_path):
    hostile = tmp_path / "hostile.hipacm"
    with sqlite3.connect(hostile) as db:
        db.executescript(
            "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES('schema_version', '1');"
            "CREATE VIEW entries AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
            " SELECT printf('%064x', i) AS key, zeroblob(900000000) AS code FROM n;")
    r = run("cache", "--db", tmp_path / "mine.sqlite3", "import", hostile)
    assert r.rc == 2
    assert "holds a view" in r.err
    r = run("cache", "--db", tmp_path / "mine.sqlite3", "stats", "--json")
    assert r.rc == 0 and r.json()["entries"] == 0


NOBODY = 65534


@pytest.mark.parametrize("how", ["file", "other-owner", "group-writable", "environment"])
def test_trust2_11_a_named_cache_that_cannot_be_used_exits_2(run, backend_usable, tmp_path, how):
    named = tmp_path / "named"
    env = {}
    if how in ("file", "environment"):
        named.write_text("not a directory\n")
    else:
        named.mkdir(mode=0o700)
        if how == "other-owner":
            os.chown(named, NOBODY, NOBODY)  # another user's directory, as root sees it
        else:
            named.chmod(0o770)
    args = ["warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a"]
    if how == "environment":
        env["HIPACM_CACHE_DIR"] = str(named)
    else:
        args += ["--cache-dir", named]
    r = run(*args, env=env)
    assert r.rc == 2, r.out + r.err
    assert "the cache cannot be used" in r.err and str(named) in r.err
    assert "compiling without it" not in r.err
    expected = {"file": "not a directory", "environment": "not a directory",
                "other-owner": f"belongs to another user (uid {NOBODY})",
                "group-writable": "writable by other users"}[how]
    assert expected in r.err
    # Nothing was written into a directory that is not this user's alone.
    if named.is_dir():
        assert list(named.iterdir()) == []


def test_trust2_11_the_default_cache_location_keeps_its_quiet_fallback(run, backend_usable,
                                                                       tmp_path):
    blocker = tmp_path / "xdg"
    blocker.write_text("a file where XDG_CACHE_HOME's directory would be\n")
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a",
            env={"HIPACM_CACHE_DIR": None, "XDG_CACHE_HOME": str(blocker)})
    assert r.rc == 0, r.err
    assert "compiling without it" in r.err


def test_trust2_11_cache_import_into_a_new_db_path_makes_the_right_kind(run, backend_usable,
                                                                        tmp_path):
    warm(run, tmp_path)
    exported = tmp_path / "kernels.hipacm"
    assert run("cache", "export", exported).rc == 0
    # A new name is a cache directory, as --cache-dir and HIPACM_CACHE_DIR take it.
    new_dir = tmp_path / "new-cache"
    r = run("cache", "--db", new_dir, "import", exported, "--json")
    assert r.rc == 0, r.err
    assert r.json()["path"] == str(new_dir / "kernels.sqlite3")
    assert new_dir.is_dir() and (new_dir / "kernels.sqlite3").is_file()
    assert os.stat(new_dir).st_mode & 0o777 == 0o700
    hot = run("warmup", *[EXAMPLES / k for k in KERNELS], "--arch", "gfx90a", "--cache-dir",
              new_dir, "--json", "-")
    assert hot.rc == 0, hot.err
    assert hot.json()["totals"]["cache_hits"] == 3
    # A name ending in .sqlite3 is a database file.
    new_file = tmp_path / "new.sqlite3"
    assert run("cache", "--db", new_file, "import", exported).rc == 0
    assert new_file.is_file()
    # A directory that is not this user's alone is refused, and nothing is written there.
    for mode, owner in ((0o700, NOBODY), (0o777, 0)):
        shared = tmp_path / f"shared-{mode:o}-{owner}"
        shared.mkdir()
        shared.chmod(mode)
        os.chown(shared, owner, owner)
        r = run("cache", "--db", shared, "import", exported)
        assert r.rc == 2, r.out + r.err
        assert list(shared.iterdir()) == []
