# SPDX-License-Identifier: MIT
# test_cache_export_versions.py - `cache export` reads each entry's code-object version from its
# code object, warns about v5 and v6, and `--max-code-object-version` leaves newer ones out.
import json
import sqlite3

from conftest import EXAMPLES

KEY_COLUMNS = "arch, source_name, backend, compiler_version, plugin_version, lowered_names, " \
    "expected_kernels, log, size, created_us, last_used_us, hits, checksum"


def warm_one(run, tmp_path, cache_dir):
    r = run("warmup", EXAMPLES / "saxpy.hip", "--arch", "gfx90a", "--json", tmp_path / "r.json")
    assert r.rc == 0, r.err
    return cache_dir / "kernels.sqlite3"


def add_copy_with_version(db, version):
    """A copy of the one real entry whose header says code object `version` (the ELF ident's
    EI_ABIVERSION byte is version - 2): what a newer hipRTC would have stored."""
    with sqlite3.connect(db) as conn:
        key, code = conn.execute("SELECT key, code FROM entries ORDER BY key LIMIT 1").fetchone()
        code = bytearray(code)
        code[8] = version - 2
        conn.execute(f"INSERT INTO entries(key, {KEY_COLUMNS}, code) "
                     f"SELECT ?, {KEY_COLUMNS}, ? FROM entries WHERE key = ?",
                     (f"v{version}" + key[2:], bytes(code), key))


def export(run, tmp_path, name, *extra):
    r = run("cache", "export", tmp_path / name, "--json", *extra)
    assert r.rc == 0, r.err
    return r.json(), r.err


def test_export_warns_about_v5_and_v6_and_leaves_them_out_on_request(run, backend_usable,
                                                                     tmp_path, cache_dir):
    db = warm_one(run, tmp_path, cache_dir)
    with sqlite3.connect(db) as conn:
        real = conn.execute("SELECT code FROM entries").fetchone()[0]
    host_version = real[8] + 2
    assert real[7] == 64 and 4 <= host_version <= 6  # ELFOSABI_AMDGPU_HSA, v4 to v6
    for version in (4, 5, 6):
        if version != host_version:
            add_copy_with_version(db, version)

    doc, err = export(run, tmp_path, "all.hipacm")
    assert doc["exported"] == 3 and doc["left_out"] == [] and doc["max_code_object_version"] == 0
    assert doc["code_object_versions"] == {"4": 1, "5": 1, "6": 1}
    assert "1 exported entries hold code object v6: code object v6 needs ROCm 6.3's runtime or " \
        "newer (ROCm 5.2.3's loader refuses it); pass --max-code-object-version 5" in err
    assert "1 exported entries hold code object v5" in err and "ROCm 5.2.3's loader does" in err
    assert len(doc["warnings"]) == 2 and all(w in err for w in doc["warnings"])

    limited, err = export(run, tmp_path, "v5.hipacm", "--max-code-object-version", "5")
    assert limited["exported"] == 2 and "warning" not in err
    assert limited["code_object_versions"] == {"4": 1, "5": 1}
    assert limited["left_out"] == [{"code_object_version": 6, "entries": 1,
                                    "reason": "above --max-code-object-version 5; code object v6 "
                                              "needs ROCm 6.3's runtime or newer (ROCm 5.2.3's "
                                              "loader refuses it)"}]
    with sqlite3.connect(tmp_path / "v5.hipacm") as conn:
        assert sorted(row[0][8] + 2 for row in conn.execute("SELECT code FROM entries")) == [4, 5]

    r = run("cache", "export", tmp_path / "v4.hipacm", "--max-code-object-version", "4")
    assert r.rc == 0, r.err
    assert "exported 1 entries to" in r.out and "left out 2 entries:" in r.out
    assert "1 with code object v5: above --max-code-object-version 4; code object v5 needs" in r.out
    assert "1 with code object v6: above --max-code-object-version 4; code object v6 needs ROCm " \
        "6.3's runtime or newer" in r.out


def test_max_code_object_version_is_checked(run, tmp_path):
    for bad in ("2", "7", "six"):
        r = run("cache", "export", tmp_path / f"x{bad}.hipacm", "--max-code-object-version", bad)
        assert r.rc == 2, (bad, r.out, r.err)
        assert "max-code-object-version" in r.err
        assert not (tmp_path / f"x{bad}.hipacm").exists()


def test_export_of_a_host_cache_counts_its_version(run, backend_usable, tmp_path, cache_dir):
    db = warm_one(run, tmp_path, cache_dir)
    with sqlite3.connect(db) as conn:
        version = conn.execute("SELECT code FROM entries").fetchone()[0][8] + 2
    doc, _ = export(run, tmp_path, "one.hipacm", "--max-code-object-version", "6")
    assert doc["code_object_versions"] == {str(version): 1}
    assert doc["warnings"] == [] and doc["left_out"] == []
    json.dumps(doc)
