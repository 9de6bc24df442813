# SPDX-License-Identifier: MIT
# test_remote_cache.py - the remote cache (Redis) through the real tool: `cache remote
# stats|push|pull`, doctor's remote check and `warmup --remote-cache`, against a private
# redis-server with a password, with real kernels compiled by hipRTC for gfx90a. Two "machines"
# are two cache directories.
import json
import os
import shutil
import sqlite3
import subprocess

import pytest

from conftest import CLI, EXAMPLES, base_env
from redis_server import RedisServer, free_port

KERNELS = ["saxpy.hip", "vector_add.hip", "scale.hip"]

# As the remote tier's C++ tests: skipped without redis-server, except in CI, which installs it.
pytestmark = pytest.mark.skipif(
    shutil.which("redis-server") is None and os.environ.get("CI") != "true",
    reason="redis-server is not installed (.ci/install-deps)")


def hipacm(cache, *args, env=None, timeout=600):
    full = base_env(cache)
    for name in [n for n in full if n.startswith("HIPACM_REMOTE_CACHE")]:
        del full[name]
    for name, value in (env or {}).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = str(value)
    completed = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, env=full,
                               timeout=timeout, check=False)
    return completed


def key_file(directory, name="fleet.key"):
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(32).hex().encode())
    return path


def entries_of(db):
    """key -> (arch, checksum, code bytes) of every entry in the database file `db`."""
    with sqlite3.connect(db) as conn:
        return {key: (arch, checksum, bytes(code)) for key, arch, checksum, code in
                conn.execute("SELECT key, arch, checksum, code FROM entries")}


@pytest.fixture(scope="module")
def writer(tmp_path_factory):
    """Cache A, warmed from a manifest of three example kernels (real compiles), and that manifest."""
    if not CLI:
        pytest.fail("set HIPACM_CLI to the built hipacm executable (CTest does)")
    root = tmp_path_factory.mktemp("remote")
    kernels = root / "kernels"
    kernels.mkdir()
    for name in KERNELS:
        shutil.copy(EXAMPLES / name, kernels / name)
    manifest = kernels / "manifest.json"
    manifest.write_text(json.dumps({"schema": "hipacm-examples-manifest-1", "kernels": [
        {"source": name, "options": ["-O3"], "headers": {}, "name_expressions": []}
        for name in KERNELS]}))
    cache_a = root / "cache-a"
    r = hipacm(cache_a, "warmup", manifest, "--arch", "gfx90a", "--json", root / "a.json")
    if r.returncode == 3:
        pytest.skip("no compiler backend here")
    assert r.returncode == 0, r.stderr
    assert json.loads((root / "a.json").read_text())["totals"]["compiled"] == len(KERNELS)
    return {"root": root, "manifest": manifest, "cache": cache_a,
            "db": cache_a / "kernels.sqlite3"}


@pytest.fixture
def redis(tmp_path):
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()


def remote_env(redis, tmp_path, key=None, mode=None):
    env = {"HIPACM_REMOTE_CACHE": redis.url(),
           "HIPACM_REMOTE_CACHE_PASSWORD_FILE": redis.password_file(tmp_path)}
    if key:
        env["HIPACM_REMOTE_CACHE_KEY_FILE"] = key
    if mode:
        env["HIPACM_REMOTE_CACHE_MODE"] = mode
    return env


def push(writer, redis, tmp_path, key, *extra):
    r = hipacm(writer["cache"], "cache", "remote", "--mode", "read-write", "push", "--json",
               *extra, env=remote_env(redis, tmp_path, key))
    assert redis.password not in r.stdout + r.stderr
    return r


def assert_no_password(redis, *texts):
    for text in texts:
        assert redis.password not in text


def test_push_then_pull_into_an_empty_cache_gives_the_same_entries(writer, redis, tmp_path):
    key = key_file(tmp_path)
    dry = push(writer, redis, tmp_path, key, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["pushed"] == len(KERNELS)
    assert b"hipacm:v1:entry:" not in redis.command("KEYS", "*")  # a dry run writes nothing

    first = push(writer, redis, tmp_path, key)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert (report["pushed"], report["present"], report["failed"], report["skipped_invalid"]) == \
        (len(KERNELS), 0, [], [])
    again = json.loads(push(writer, redis, tmp_path, key).stdout)
    assert (again["pushed"], again["present"]) == (0, len(KERNELS))
    # The server itself holds them, under the keys of A's entries.
    assert redis.command("KEYS", "hipacm:v1:entry:*").count(b"hipacm:v1:entry:") == len(KERNELS)
    for cache_key in entries_of(writer["db"]):
        assert redis.command("EXISTS", "hipacm:v1:entry:" + cache_key) == b":1\r\n"

    cache_b = tmp_path / "cache-b"
    r = hipacm(cache_b, "cache", "--db", cache_b, "remote", "pull", writer["manifest"],
               "--arch", "gfx90a", "--json", env=remote_env(redis, tmp_path, key))
    assert r.returncode == 0, r.stderr
    pulled = json.loads(r.stdout)
    assert (pulled["pulled"], pulled["already_local"], pulled["absent"], pulled["refused"]) == \
        (len(KERNELS), 0, 0, 0)
    assert {q["result"] for q in pulled["requests"]} == {"pulled"}
    from test_report_schemas import errors
    assert errors(pulled, "hipacm-cache-remote-pull-1") == []
    assert errors(report, "hipacm-cache-remote-push-1") == []
    # Byte for byte what A holds: keys, arch, checksum and code.
    assert entries_of(cache_b / "kernels.sqlite3") == entries_of(writer["db"])

    # A second pull finds everything local and asks the remote for nothing.
    again = json.loads(hipacm(cache_b, "cache", "--db", cache_b, "remote", "pull",
                              writer["manifest"], "--arch", "gfx90a", "--json",
                              env=remote_env(redis, tmp_path, key)).stdout)
    assert (again["pulled"], again["already_local"]) == (0, len(KERNELS))


def test_pull_without_a_key_pulls_nothing_and_says_why(writer, redis, tmp_path):
    push(writer, redis, tmp_path, key_file(tmp_path))
    cache_b = tmp_path / "cache-b"
    r = hipacm(cache_b, "cache", "--db", cache_b, "remote", "pull", writer["manifest"],
               "--arch", "gfx90a", env=remote_env(redis, tmp_path))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no key" in r.stderr and "HIPACM_REMOTE_CACHE_KEY_FILE" in r.stderr, r.stderr
    assert not (cache_b / "kernels.sqlite3").exists()


def test_pull_with_another_key_refuses_every_entry(writer, redis, tmp_path):
    push(writer, redis, tmp_path, key_file(tmp_path))
    other = key_file(tmp_path, "other.key")
    cache_b = tmp_path / "cache-b"
    r = hipacm(cache_b, "cache", "--db", cache_b, "remote", "pull", writer["manifest"],
               "--arch", "gfx90a", "--json", env=remote_env(redis, tmp_path, other))
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert (report["pulled"], report["refused"]) == (0, len(KERNELS))
    assert entries_of(cache_b / "kernels.sqlite3") == {}


def test_push_needs_read_write_and_a_key(writer, redis, tmp_path):
    r = hipacm(writer["cache"], "cache", "remote", "push",
               env=remote_env(redis, tmp_path, key_file(tmp_path)))
    assert r.returncode == 2 and "read-write" in r.stderr
    r = hipacm(writer["cache"], "cache", "remote", "--mode", "read-write", "push",
               env=remote_env(redis, tmp_path))
    assert r.returncode == 2 and "HIPACM_REMOTE_CACHE_KEY_FILE" in r.stderr
    assert b"hipacm:v1:entry:" not in redis.command("KEYS", "*")


def test_stats_text_and_json(writer, redis, tmp_path):
    key = key_file(tmp_path)
    push(writer, redis, tmp_path, key)
    redis.command("CONFIG", "SET", "maxmemory-policy", "volatile-lru")
    env = remote_env(redis, tmp_path, key)
    r = hipacm(writer["cache"], "cache", "remote", "stats", "--json", env=env)
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    assert stats["schema"] == "hipacm-cache-remote-stats-1"
    assert stats["reachable"] is True and stats["error"] is None
    assert stats["entries"] == len(KERNELS) and stats["entries_complete"] is True
    assert stats["remote"] == f"redis://:***@127.0.0.1:{redis.port}/0"  # the file's password
    assert stats["maxmemory_policy"] == "volatile-lru" and "expiry" in stats["policy_note"]
    assert stats["server_version"] and stats["used_memory"] > 0
    assert len(stats["key"]["fingerprint"]) == 16
    from test_report_schemas import errors
    assert errors(stats, "hipacm-cache-remote-stats-1") == []

    text = hipacm(writer["cache"], "cache", "remote", "stats", env=env)
    assert text.returncode == 0, text.stderr
    assert "reachable:   yes" in text.stdout and f"entries:     {len(KERNELS)}" in text.stdout
    assert "volatile-lru" in text.stdout
    assert_no_password(redis, r.stdout, r.stderr, text.stdout, text.stderr)

    # A URL with the password in the environment is shown without it.
    env["HIPACM_REMOTE_CACHE"] = redis.url(with_password=True)
    shown = hipacm(writer["cache"], "cache", "remote", "stats", "--json", env=env)
    assert json.loads(shown.stdout)["remote"] == f"redis://:***@127.0.0.1:{redis.port}/0"
    assert_no_password(redis, shown.stdout, shown.stderr)


def test_stats_of_a_dead_port(tmp_path):
    r = hipacm(tmp_path / "c", "cache", "remote", "--remote-cache",
               f"redis://127.0.0.1:{free_port()}", "stats", "--json", timeout=60)
    assert r.returncode == 1
    stats = json.loads(r.stdout)
    assert stats["reachable"] is False and stats["error"] and stats["entries"] is None
    from test_report_schemas import errors
    assert errors(stats, "hipacm-cache-remote-stats-1") == []


@pytest.mark.parametrize("argv", [
    ["cache", "remote", "--remote-cache", "URL", "stats"],
    ["warmup", str(EXAMPLES / "saxpy.hip"), "--arch", "gfx90a", "--remote-cache", "URL"],
])
def test_a_password_on_the_command_line_is_refused(tmp_path, argv):
    secret = "argv-secret-1234"
    url = f"redis://ci:{secret}@127.0.0.1:{free_port()}"
    r = hipacm(tmp_path / "c", *[url if a == "URL" else a for a in argv])
    assert r.returncode == 2
    assert "HIPACM_REMOTE_CACHE_PASSWORD_FILE" in r.stderr and "$HIPACM_REMOTE_CACHE" in r.stderr
    assert secret not in r.stdout + r.stderr
    assert "redis://ci:***@" in r.stderr
    assert not (tmp_path / "c").exists()  # refused before anything ran
    # A user without a password is fine (the password comes from a file).
    ok = hipacm(tmp_path / "c", "cache", "remote", "--remote-cache",
                f"redis://ci@127.0.0.1:{free_port()}", "stats", timeout=60)
    assert ok.returncode == 1 and "reachable:   no" in ok.stdout


def remote_check(document):
    checks = [c for c in document["checks"] if c["name"] == "remote"]
    assert len(checks) == 1
    return checks[0]


def test_doctor_reports_a_dead_remote(tmp_path):
    port = free_port()
    r = hipacm(tmp_path / "c", "doctor", "--json", timeout=60,
               env={"HIPACM_REMOTE_CACHE": f"redis://:doctor-secret@127.0.0.1:{port}"})
    assert "doctor-secret" not in r.stdout + r.stderr
    check = remote_check(json.loads(r.stdout))
    assert check["level"] == "warning" and "unreachable" in check["summary"]
    assert check["details"]["reachable"] is False
    assert check["details"]["address"] == f"redis://:***@127.0.0.1:{port}/0"
    settings = {s["name"]: s["value"] for s in json.loads(r.stdout)["settings"]}
    assert settings["HIPACM_REMOTE_CACHE"] == f"redis://:***@127.0.0.1:{port}/0"
    text = hipacm(tmp_path / "c", "doctor", timeout=60,
                  env={"HIPACM_REMOTE_CACHE": f"redis://:doctor-secret@127.0.0.1:{port}"})
    assert "doctor-secret" not in text.stdout + text.stderr
    assert "remote" in text.stdout and "unreachable" in text.stdout


def test_doctor_round_trip_on_a_live_remote(redis, tmp_path):
    key = key_file(tmp_path)
    env = remote_env(redis, tmp_path, key, mode="read-write")
    env["HIPACM_REMOTE_CACHE"] = redis.url(with_password=True)
    r = hipacm(tmp_path / "c", "doctor", "--json", env=env, timeout=120)
    assert_no_password(redis, r.stdout, r.stderr)
    document = json.loads(r.stdout)
    check = remote_check(document)
    assert check["level"] == "ok", check["summary"]
    assert check["details"]["reachable"] is True and check["details"]["round_trip"] == "ok"
    assert len(check["details"]["key_fingerprint"]) == 16
    assert "round trip ok" in check["summary"]
    assert b"doctor-probe" not in redis.command("KEYS", "*")  # the probe was deleted
    from test_report_schemas import errors
    assert errors(document, "hipacm-doctor-1") == []
    # Without a key: reachable, and nothing is served.
    del env["HIPACM_REMOTE_CACHE_KEY_FILE"]
    text = hipacm(tmp_path / "c", "doctor", env=env, timeout=120)
    assert "no key: nothing from the remote cache is served" in text.stdout
    assert_no_password(redis, text.stdout, text.stderr)


def test_warmup_counts_remote_hits(writer, redis, tmp_path):
    key = key_file(tmp_path)
    assert push(writer, redis, tmp_path, key).returncode == 0
    env = remote_env(redis, tmp_path, key)
    url = env.pop("HIPACM_REMOTE_CACHE")
    cache_b = tmp_path / "cache-b"
    report = tmp_path / "b.json"
    r = hipacm(cache_b, "warmup", writer["manifest"], "--arch", "gfx90a", "--remote-cache", url,
               "--json", report, env=env)
    assert r.returncode == 0, r.stderr
    document = json.loads(report.read_text())
    totals = document["totals"]
    assert (totals["remote_hits"], totals["cache_hits"], totals["compiled"]) == \
        (len(KERNELS), len(KERNELS), 0)
    assert document["remote_cache"] == url + "/0"
    assert f"{len(KERNELS)} served from the remote cache" in r.stdout
    from test_report_schemas import errors
    assert errors(document, "hipacm-warmup-report-2") == []
    # The same run again is served by B's own cache now.
    again = tmp_path / "again.json"
    assert hipacm(cache_b, "warmup", writer["manifest"], "--arch", "gfx90a", "--remote-cache",
                  url, "--json", again, env=env).returncode == 0
    assert json.loads(again.read_text())["totals"]["remote_hits"] == 0


def test_push_skips_invalid_entries(writer, redis, tmp_path):
    damaged = tmp_path / "damaged"
    shutil.copytree(writer["cache"], damaged)
    with sqlite3.connect(damaged / "kernels.sqlite3") as db:
        key, code = db.execute(
            "SELECT key, code FROM entries WHERE source_name = 'saxpy.hip'").fetchone()
        flipped = bytearray(code)
        flipped[len(flipped) // 2] ^= 0xFF
        db.execute("UPDATE entries SET code = ? WHERE key = ?", (bytes(flipped), key))
    r = hipacm(damaged, "cache", "--db", damaged, "remote", "--mode", "read-write", "push",
               "--json", env=remote_env(redis, tmp_path, key_file(tmp_path)))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["pushed"] == len(KERNELS) - 1
    assert [e["key"] for e in report["skipped_invalid"]] == [key]
    assert redis.command("EXISTS", "hipacm:v1:entry:" + key) == b":0\r\n"
    from test_report_schemas import errors
    assert errors(report, "hipacm-cache-remote-push-1") == []


def test_pull_from_a_dead_remote_says_so_once(writer, tmp_path):
    cache_b = tmp_path / "cache-b"
    r = hipacm(cache_b, "cache", "--db", cache_b, "remote", "--remote-cache",
               f"redis://127.0.0.1:{free_port()}", "pull", writer["manifest"], "--arch",
               "gfx90a", env={"HIPACM_REMOTE_CACHE_KEY_FILE": key_file(tmp_path)}, timeout=60)
    assert r.returncode == 1
    assert r.stderr.count("nothing was pulled") == 1 and "cannot connect" in r.stderr
    assert not cache_b.exists()
