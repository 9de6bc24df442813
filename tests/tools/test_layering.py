# SPDX-License-Identifier: MIT
# test_layering.py - scripts/check-layering.py on small made-up trees, and on this repository.
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECKER = REPO / "scripts" / "check-layering.py"
HEADER = "# DEPS - the folders this folder may include (a test tree).\n"


def check(root):
    completed = subprocess.run([sys.executable, str(CHECKER), "--root", str(root)],
                               capture_output=True, text=True, timeout=120, check=False)
    return completed.returncode, completed.stdout, completed.stderr


def folder(root, name, deps, files, readme=None):
    """Makes root/name with a DEPS of `deps`, a README whose May-import names the same folders
    (or `readme`), and `files` ({file name: text})."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    if deps is not None:
        (path / "DEPS").write_text(HEADER + "".join(f"{d}  # why\n" for d in deps))
    if readme is None:
        readme = "**May import:** " + ", ".join(f"`{d}/`" for d in deps or []) + "."
    if readme is not False:
        (path / "README.md").write_text(f"# {name}/\n\nWhat it owns. {readme}\n")
    for file_name, text in files.items():
        (path / file_name).parent.mkdir(parents=True, exist_ok=True)
        (path / file_name).write_text(text)


@pytest.fixture
def clean_tree(tmp_path):
    """support <- hip_backend <- hip_backend/codeobject, plugin/mode over both, public headers."""
    folder(tmp_path, "include", [], {"hipacm/hipacm.h": "int hipacm(void);\n",
                                     "hipacm/cpp/mode.hpp": "#include <hipacm/hipacm.h>\n"},
           readme="**May import:** nothing of the project.")
    folder(tmp_path, "support", ["include"], {"log.h": "#include <hipacm/hipacm.h>\n",
                                              "log.cpp": '#include "support/log.h"\n'})
    folder(tmp_path, "hip_backend", ["support"], {"compiler.h": '#include "support/log.h"\n'})
    folder(tmp_path, "hip_backend/codeobject", ["hip_backend", "support"], {
        "elf_reader.h": '#include "hip_backend/compiler.h"\n',
        "elf_reader.cpp": '#include "elf_reader.h"\n#include <vector>\n'})
    folder(tmp_path, "plugin/mode", ["hip_backend/codeobject", "hip_backend", "support"], {
        "mode.cpp": '#include "hip_backend/codeobject/elf_reader.h"\n'
                    ' #  include "hip_backend/compiler.h"\n#include <boost/thread.hpp>\n'})
    return tmp_path


def test_a_clean_tree_passes_with_a_summary(clean_tree):
    rc, out, err = check(clean_tree)
    assert rc == 0, err
    assert err == ""
    assert out.startswith("layering: ok (5 folders, 8 files, ")
    assert len(out.splitlines()) == 1


def test_an_undeclared_include_fails_naming_file_line_and_folders(clean_tree):
    (clean_tree / "support" / "log.cpp").write_text(
        '#include "support/log.h"\n\n#include "hip_backend/compiler.h"\n')
    rc, _, err = check(clean_tree)
    assert rc == 1
    assert ("support/log.cpp:3: includes hip_backend/compiler.h, folder support does not "
            "declare hip_backend") in err.splitlines()


def test_a_cycle_of_includes_fails_and_is_named(clean_tree):
    # Declared both ways, so only the cycle is wrong.
    folder(clean_tree, "support", ["include", "hip_backend"], {
        "log.cpp": '#include "hip_backend/compiler.h"\n'})
    rc, _, err = check(clean_tree)
    assert rc == 1
    lines = err.splitlines()
    assert any(line.startswith("cycle in includes: hip_backend -> support -> hip_backend (")
               and "support/log.cpp:1" in line and "hip_backend/compiler.h:1" in line
               for line in lines), err
    assert "cycle in DEPS: hip_backend -> support -> hip_backend" in lines
    assert not any("does not declare" in line for line in lines)


def test_a_cycle_of_declarations_alone_fails(clean_tree):
    folder(clean_tree, "support", ["include", "plugin/mode"], {})
    rc, _, err = check(clean_tree)
    assert rc == 1
    assert "cycle in DEPS: hip_backend -> support -> plugin/mode -> hip_backend" in err.splitlines()
    assert not any(line.startswith("cycle in includes") for line in err.splitlines())


def test_a_folder_without_deps_or_readme_fails(clean_tree):
    (clean_tree / "hip_backend" / "codeobject" / "DEPS").unlink()
    (clean_tree / "plugin" / "mode" / "README.md").unlink()
    rc, _, err = check(clean_tree)
    assert rc == 1
    lines = err.splitlines()
    assert "hip_backend/codeobject/: folder has no DEPS" in lines
    assert "plugin/mode/: folder has no README.md" in lines
    # With no DEPS nothing is declared, so its includes are reported too.
    assert any(line.startswith("hip_backend/codeobject/elf_reader.h:1: includes") for line in lines)


def test_a_deps_entry_that_names_no_folder_fails(clean_tree):
    folder(clean_tree, "support", ["include", "suport"], {}, readme="**May import:** `include/`.")
    rc, _, err = check(clean_tree)
    assert rc == 1
    assert "support/DEPS:3: names suport, which is no source folder" in err.splitlines()


def test_a_deps_file_needs_its_header_comment(clean_tree):
    (clean_tree / "support" / "DEPS").write_text("include\n")
    rc, _, err = check(clean_tree)
    assert rc == 1
    assert any(line.startswith("support/DEPS:1: the first line is not the comment")
               for line in err.splitlines()), err


def test_a_readme_must_name_the_folders_deps_declares(clean_tree):
    folder(clean_tree, "plugin/mode", ["hip_backend/codeobject", "hip_backend", "support"], {},
           readme="**May import:** the top of `hip_backend/` (see `compiler.h`), `support/`, "
                  "`include/hipacm/hipacm.h`; never `tools/`.")
    rc, _, err = check(clean_tree)
    assert rc == 1
    lines = err.splitlines()
    assert "plugin/mode/README.md: May import names include, DEPS does not" in lines
    assert ("plugin/mode/README.md: May import does not name hip_backend/codeobject, DEPS does"
            in lines)
    assert len([line for line in lines if "README" in line]) == 2, err


def test_an_include_of_no_repository_file_fails(clean_tree):
    (clean_tree / "support" / "log.cpp").write_text('#include "support/gone.h"\n')
    rc, _, err = check(clean_tree)
    assert rc == 1
    assert 'support/log.cpp:1: includes "support/gone.h", which is no file of the repository' in err


def test_this_repository_passes():
    rc, out, err = check(REPO)
    assert rc == 0, err
    assert out.startswith("layering: ok (")
