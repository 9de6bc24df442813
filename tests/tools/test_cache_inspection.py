# SPDX-License-Identifier: MIT
# test_cache_inspection.py - `cache stats` and `cache list` only read: a missing cache stays
# missing, a cache's files stay byte for byte as they were, a read-only mount works; full names,
# human sizes, the size bound and the hit rate; byte counts written as 512M or 1.5G.
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import EXAMPLES

KERNELS = ["saxpy.hip", "scale.hip"]


def warm(run, *paths):
    r = run("warmup", *(paths or [EXAMPLES / k for k in KERNELS]), "--arch", "gfx90a", "-q")
    assert r.rc == 0, r.err
    return r


def snapshot(directory):
    """Every file in `directory` with its bytes and modification time."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


def checkpoint(db):
    """Leaves `db` alone in its directory, every commit in the file: no -wal, no -shm."""
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


@pytest.mark.parametrize("command", ["stats", "list"])
def test_a_missing_cache_is_reported_and_not_created(run, tmp_path, cache_dir, command):
    r = run("cache", command)
    assert r.rc == 2
    assert f"no cache at {cache_dir / 'kernels.sqlite3'}" in r.err
    assert not cache_dir.exists()
    missing = tmp_path / "elsewhere" / "kernels.sqlite3"
    r = run("cache", "--db", missing, command, "--json")
    assert r.rc == 2 and "no cache at" in r.err and r.out == ""
    assert not missing.parent.exists()


@pytest.mark.parametrize("journal", ["wal", "checkpointed", "export"])
def test_stats_and_list_change_nothing_beside_the_cache(run, backend_usable, tmp_path, cache_dir,
                                                        journal):
    warm(run)
    db = cache_dir / "kernels.sqlite3"
    if journal == "checkpointed":
        checkpoint(db)
        # No journal beside the database; the claim file (docs/CACHE.md) holds only locks.
        assert sorted(p.name for p in cache_dir.iterdir()) == ["kernels.sqlite3",
                                                              "kernels.sqlite3.claims"]
    if journal == "export":  # a rollback-journal file, as a system cache is made
        exported = tmp_path / "system" / "kernels.hipacm"
        exported.parent.mkdir()
        assert run("cache", "export", exported).rc == 0
        db = exported
    before = snapshot(db.parent)
    for args in (["stats"], ["stats", "--json"], ["list"], ["list", "--json", "--arch", "gfx90a"]):
        r = run("cache", "--db", db, *args)
        assert r.rc == 0, r.err
    assert run("cache", "--db", db, "stats", "--json").json()["entries"] == len(KERNELS)
    assert snapshot(db.parent) == before


def can_mount_read_only(tmp_path):
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(["unshare", "-m", "sh", "-c",
                           f"mount --bind -o ro {probe} {probe} && ! touch {probe}/x 2>/dev/null"],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.parametrize("checkpointed", [False, True])
def test_stats_and_list_read_a_cache_on_a_read_only_mount(cli_path, run, backend_usable, tmp_path,
                                                          cache_dir, checkpointed):
    if shutil.which("unshare") is None or not can_mount_read_only(tmp_path):
        pytest.skip("needs root and mount namespaces (unshare -m) for a read-only bind mount")
    warm(run)
    system = tmp_path / "system"
    shutil.copytree(cache_dir, system)  # with its -wal and -shm when not checkpointed
    if checkpointed:
        checkpoint(system / "kernels.sqlite3")
    before = snapshot(system)
    script = (f"mount --bind -o ro {system} {system} && "
              f"'{cli_path}' cache --db {system} stats --json && "
              f"'{cli_path}' cache --db {system} list -q")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                          check=False, env=dict(os.environ, HIPACM_CACHE_DIR=str(cache_dir)))
    assert done.returncode == 0, done.stderr
    assert '"entries": 2' in done.stdout
    assert all(name in done.stdout for name in KERNELS)
    assert snapshot(system) == before


def test_list_shows_whole_source_names(run, backend_usable, tmp_path):
    long_name = "a_kernel_file_whose_name_is_much_longer_than_twenty_four_characters.hip"
    kernel = tmp_path / long_name
    shutil.copy(EXAMPLES / "saxpy.hip", kernel)
    warm(run, kernel, EXAMPLES / "scale.hip")
    r = run("cache", "list")
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["key", "arch", "size", "hits", "last", "used", "(UTC)", "source"]
    rows = [line for line in lines[1:-1]]
    assert sorted(row.split()[-1] for row in rows) == sorted([long_name, "scale.hip"])
    # The columns line up: every row's source starts where the heading's does.
    column = lines[0].index("source")
    assert all(row[column:].split()[0] in (long_name, "scale.hip") for row in rows), r.out
    assert lines[-1].startswith("2 entries in ")


def test_stats_shows_human_sizes_the_bound_and_the_hit_rate(run, backend_usable, cache_dir):
    warm(run)
    warm(run, EXAMPLES / "saxpy.hip")  # one hit
    doc = run("cache", "stats", "--json").json()
    assert doc["entries"] == 2 and doc["max_bytes"] == 2 << 30
    assert doc["lookups"] == {"hits": 1, "misses": 2, "hit_rate": pytest.approx(1 / 3)}
    assert [a["arch"] for a in doc["by_arch"]] == ["gfx90a"]
    text = run("cache", "stats", env={"HIPACM_CACHE_MAX_BYTES": str(512 << 20)}).out
    assert "of at most 512.0 MiB" in text
    assert "hit rate  33.3% (1 of 3 lookups)" in text
    assert "KiB" in text.splitlines()[2]  # the payload of two small kernels
    rows = [line.split() for line in text.splitlines() if line.startswith("gfx90a")]
    assert rows and rows[0][1] == "2"


def test_stats_of_a_cache_without_lookups_has_no_hit_rate(run, backend_usable, tmp_path):
    warm(run)
    exported = tmp_path / "kernels.hipacm"
    assert run("cache", "export", exported).rc == 0
    fresh = tmp_path / "fresh.sqlite3"
    assert run("cache", "--db", fresh, "import", exported).rc == 0
    doc = run("cache", "--db", fresh, "stats", "--json").json()
    assert doc["lookups"] == {"hits": 0, "misses": 0, "hit_rate": None}
    assert "no lookups recorded" in run("cache", "--db", fresh, "stats").out


@pytest.mark.parametrize("size,kept", [("0", 0), ("1.5G", 2), ("100M", 2), ("KiB", 1), ("k", 1)])
def test_prune_takes_byte_counts_with_units(run, backend_usable, size, kept):
    warm(run)
    sizes = [e["size"] for e in run("cache", "list", "--json").json()["entries"]]
    assert len(sizes) == 2
    if kept == 1:
        # Room for the larger entry alone, in whole KiB (code objects differ between ROCm
        # releases): read as bytes instead, it would keep nothing.
        kib = -(-max(sizes) // 1024)
        assert kib * 1024 < sum(sizes)
        size = f"{kib}{size}"
    r = run("cache", "prune", "--max-bytes", size, "--json")
    assert r.rc == 0, r.err
    assert r.json()["entries"] == kept


@pytest.mark.parametrize("size", ["5GB", "-1", "1e9", "lots", "1.5", "", "9999999T"])
def test_prune_refuses_what_is_not_a_byte_count(run, tmp_path, size):
    r = run("cache", "--db", tmp_path / "c.sqlite3", "prune", "--max-bytes", size)
    assert r.rc == 2
    assert "--max-bytes" in r.err
    assert not (tmp_path / "c.sqlite3").exists()


@pytest.mark.parametrize("args", [["verify"], ["verify", "--remove"], ["clear"],
                                  ["prune", "--max-bytes", "1G"], ["export", "OUT"]])
def test_commands_that_change_a_cache_do_not_create_a_missing_one(run, tmp_path, args):
    missing = tmp_path / "typo" / "kernels.sqlite3"
    args = [str(tmp_path / "out.sqlite3") if a == "OUT" else a for a in args]
    r = run("cache", "--db", missing, *args)
    assert r.rc == 2
    assert f"no cache at {missing}" in r.err
    assert not missing.parent.exists()
    assert not (tmp_path / "out.sqlite3").exists()


def test_inspect_by_key_without_a_cache_creates_none(run, tmp_path):
    cache_dir = tmp_path / "nothing-here"
    r = run("inspect", "0123abcd", env={"HIPACM_CACHE_DIR": str(cache_dir)})
    assert r.rc == 2
    assert "0123abcd" in r.err
    assert not cache_dir.exists()


@pytest.mark.parametrize("command", [["cache", "stats"], ["cache", "list"], ["cache", "verify"],
                                     ["inspect", "0123abcd"]])
def test_a_fifo_where_the_database_should_be_is_refused_at_once(run, tmp_path, command):
    fifo = tmp_path / "kernels.sqlite3"
    os.mkfifo(fifo)
    args = [*command[:1], "--db", tmp_path, *command[1:]] if command[0] == "cache" else \
        [*command, "--db", tmp_path]
    r = run(*args, timeout=60)  # opening the FIFO for reading would block for ever
    assert r.rc == 2
    assert "is a FIFO, not a regular file" in r.err
