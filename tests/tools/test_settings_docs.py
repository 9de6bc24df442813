# SPDX-License-Identifier: MIT
# test_settings_docs.py - the list of HIPACM_* settings that `hipacm doctor --json` reports is the
# one docs/SETTINGS.md, the man page's ENVIRONMENT section and the docs' other tables show.
import re
from pathlib import Path

import pytest

from conftest import CLI

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(HIPACM_[A-Z0-9_]+)` \| (.*) \| (.*) \| (.*) \| (.*) \|$")


def doctor_settings(run, env=None):
    doc = run("doctor", "--json", env=env).json()
    return {s["name"]: s for s in doc["settings"]}


def documented_settings():
    """{name: (takes, default, stands in for, section)} from docs/SETTINGS.md's tables."""
    rows, section = {}, None
    for line in (ROOT / "docs" / "SETTINGS.md").read_text().splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif m := ROW.match(line):
            assert m.group(1) not in rows, f"{m.group(1)} is documented twice"
            rows[m.group(1)] = (m.group(2), m.group(3), m.group(4), section)
    return rows


def test_doctor_reports_the_documented_settings(run):
    reported = doctor_settings(run)
    documented = documented_settings()
    assert sorted(reported) == sorted(documented)
    sections = {"users": "For users", "tools": "Set by hipacm itself", "tests": "For tests only"}
    for name, setting in reported.items():
        takes, default, field, section = documented[name]
        assert setting["takes"] == takes, name
        assert setting["default"] == default, name
        assert (setting["overrides"] or "-") == field.strip("`"), name
        expected = "Deprecated names" if setting["replaced_by"] else sections[setting["for"]]
        assert section == expected, name
        if setting["replaced_by"]:
            assert setting["replaced_by"] in reported, name  # it names a setting of the list


def test_doctor_shows_what_this_process_reads(run):
    reported = doctor_settings(run, env={"HIPACM_MACHINE_JOBS": "3", "HIPACM_RECORD": ""})
    assert reported["HIPACM_MACHINE_JOBS"]["value"] == "3"
    assert reported["HIPACM_RECORD"]["value"] is None  # empty reads as unset


def test_man_page_environment_section_is_the_users_list(run):
    page = Path(CLI).resolve().parent / "packaging" / "man1" / "hipacm.1"
    if not page.exists():
        pytest.skip("this build has no man pages")
    text = page.read_text()
    assert ".SH ENVIRONMENT" in text
    section = text.split(".SH ENVIRONMENT", 1)[1].split("\n.SH ", 1)[0]
    in_man = re.findall(r"^\.B (HIPACM_[A-Z0-9_]+)$", section, re.M)
    users = [n for n, s in doctor_settings(run).items()
             if s["for"] == "users" and not s["replaced_by"]]
    assert in_man == users
    assert len(users) <= 21  # the "at most about 20 variables a user can set"


def names_in_tables(path, pattern):
    return set(re.findall(pattern, path.read_text(), re.M))


def test_other_docs_name_only_listed_settings(run):
    reported = doctor_settings(run)
    users = {n for n, s in reported.items() if s["for"] == "users"}
    # README's configuration table, the cache's and NVIDIA's tables, and WORKERS.md's list.
    readme = (ROOT / "README.md").read_text().split("## Configuration", 1)[1].split("\n## ", 1)[0]
    in_readme = set(re.findall(r"^\| `(HIPACM_[A-Z0-9_]+)` \|", readme, re.M))
    assert in_readme and in_readme <= users, in_readme - users
    for doc in ("CACHE.md", "NVIDIA.md"):
        named = names_in_tables(ROOT / "docs" / doc, r"^\| `(HIPACM_[A-Z0-9_]+)` \|")
        assert named <= set(reported), (doc, named - set(reported))
    bullets = names_in_tables(ROOT / "docs" / "WORKERS.md", r"^- `(HIPACM_[A-Z0-9_]+)`")
    assert bullets and bullets <= set(reported), bullets - set(reported)
