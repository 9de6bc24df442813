#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# check-layering.py - checks that every source folder includes only the folders its DEPS file
# declares, that the folder graph has no cycle, and that each README's "May import" agrees.
"""Layering check, in the manner of Chromium's checkdeps.

Rules (stdlib only; exit 1 with one line per violation, else a one-line summary):
- A *folder* is a directory under one of ROOTS that holds C/C++ files (SOURCE_EXTS) directly.
  Subfolders are folders of their own. The public header tree is one folder, `include`: every
  file under include/ belongs to it (its headers include each other through <hipacm/...>).
  Hidden directories and SKIP_DIRS (build outputs) are not scanned. tests/ is not scanned:
  tests may include anything.
- Each folder has a README.md and a DEPS file: a first line that is a comment saying what the
  file is, then one repository-relative folder per line that the folder may include (`#`
  starts a comment). A folder may always include its own files.
- Each `#include "x"` resolves against the including file's directory, then the repository
  root, then include/, and must name a file of the repository; each `#include <x>` that names
  a file under the root or include/ is checked the same way, other <...> includes are system
  or third-party and are not checked.
- A DEPS entry must name a folder; an include of an undeclared folder is a violation.
- Neither the graph of includes nor the graph of DEPS entries may have a cycle.
- README rule: the README's first "May import" clause (up to the first ';', or the first '.'
  that ends a sentence, outside backticks) must name every DEPS entry as a backticked
  repository path (`hip_backend/codeobject/`, or a file in it such as
  `include/hipacm/hipacm.h`), and every backticked path there that names another folder (or a
  file in one) must be in DEPS. Other backticked words are ignored; "the top of
  `hip_backend/`" names the folder hip_backend itself, not its subfolders.
"""
import argparse
import os
import re
import sys

ROOTS = ("support", "plugin", "hip_backend", "worker", "tools", "include", "bench", "bindings")
SOURCE_EXTS = (".c", ".cc", ".cpp", ".h", ".hpp")
SKIP_DIRS = {"build", "target", "__pycache__"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
PUBLIC = "include"  # the folder that the whole public header tree forms


def folder_of(path):
    """The folder a repository-relative file belongs to."""
    if path == PUBLIC or path.startswith(PUBLIC + "/"):
        return PUBLIC
    return os.path.dirname(path)


def scan_sources(root):
    """Returns {folder: [repository-relative source files]}."""
    folders = {}
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames
                                 if not d.startswith(".") and d not in SKIP_DIRS)
            rel_dir = os.path.relpath(dirpath, root)
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXTS):
                    rel = os.path.join(rel_dir, name)
                    folders.setdefault(folder_of(rel), []).append(rel)
    return folders


def read_deps(path):
    """Returns (whether the first line is a comment, [(line number, folder)]) from a DEPS file."""
    entries = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        entry = line.split("#", 1)[0].strip().rstrip("/")
        if entry:
            entries.append((number, entry))
    return bool(lines) and lines[0].startswith("#"), entries


def resolve(root, source, kind, name):
    """The repository-relative file an include names, or None (system or unknown)."""
    bases = [os.path.dirname(source), "", PUBLIC] if kind == '"' else ["", PUBLIC]
    for base in bases:
        candidate = os.path.normpath(os.path.join(base, name))
        if not candidate.startswith("..") and os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def reachable(graph, start):
    """Every folder that a path of one or more edges leads to from start."""
    seen, todo = set(), [start]
    while todo:
        for child in graph.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def find_cycles(graph):
    """One shortest cycle (a list of folders, first == last) for each group of folders that
    reach each other."""
    reach = {node: reachable(graph, node) for node in graph}
    cycles, done = [], set()
    for node in sorted(graph):
        component = {other for other in reach[node] if node in reach.get(other, ())}
        if node not in done and len(component) > 1:
            done |= component
            cycles.append(shortest_cycle(graph, component))
    return cycles


def shortest_cycle(graph, component):
    """A shortest cycle through the component's first folder, by breadth-first search."""
    start = min(component)
    parents, queue = {start: None}, [start]
    for node in queue:
        for child in sorted(graph.get(node, ())):
            if child == start:
                path = [node]
                while parents[path[-1]] is not None:
                    path.append(parents[path[-1]])
                return path[::-1] + [start]
            if child in component and child not in parents:
                parents[child] = node
                queue.append(child)
    raise AssertionError("a strongly connected component without a cycle")


def may_import_clause(readme_path):
    """The text from "May import" to the end of its clause (the first ';', or '.' before a space,
    outside backticks), or None when the README has none."""
    with open(readme_path, encoding="utf-8") as f:
        text = f.read()
    match = re.search(r"may import", text, re.I)
    if match is None:
        return None
    clause, quoted = match.end(), False
    for position in range(match.end(), len(text)):
        char = text[position]
        quoted = not quoted if char == "`" else quoted
        if not quoted and (char == ";" or (char == "." and text[position + 1:position + 2] in
                                           ("", " ", "\n"))):
            break
        clause = position + 1
    return text[match.end():clause]


def readme_folders(clause, folders, own):
    """The folders other than its own that a May-import clause names as backticked paths."""
    named = set()
    for token in re.findall(r"`([^`\s]+)`", clause):
        token = token.rstrip("/")
        folder = token if token in folders else folder_of(token)
        if folder in folders and folder != own:
            named.add(folder)
    return named


def check_declarations(root, sources, problems):
    """Reads each folder's DEPS and checks it and the README against each other; returns
    {folder: the other folders it declares}."""
    declared = {}
    for folder in sorted(sources):
        for needed in ("DEPS", "README.md"):
            if not os.path.isfile(os.path.join(root, folder, needed)):
                problems.append(f"{folder}/: folder has no {needed}")
        deps_path = os.path.join(root, folder, "DEPS")
        headed, entries = read_deps(deps_path) if os.path.isfile(deps_path) else (True, [])
        if not headed:
            problems.append(f"{folder}/DEPS:1: the first line is not the comment saying what "
                            "the file is")
        declared[folder] = set()
        for number, entry in entries:
            if entry not in sources:
                problems.append(f"{folder}/DEPS:{number}: names {entry}, which is no source folder")
            elif entry != folder:
                declared[folder].add(entry)
        readme_path = os.path.join(root, folder, "README.md")
        if not os.path.isfile(readme_path):
            continue
        clause = may_import_clause(readme_path)
        if clause is None:
            problems.append(f"{folder}/README.md: no \"May import\" clause")
            continue
        named = readme_folders(clause, sources, folder)
        for extra in sorted(named - declared[folder]):
            problems.append(f"{folder}/README.md: May import names {extra}, DEPS does not")
        for missing in sorted(declared[folder] - named):
            problems.append(f"{folder}/README.md: May import does not name {missing}, DEPS does")
    return declared


def check_includes(root, sources, declared, problems):
    """Checks every include against DEPS; returns the folder graph of includes and, for each of
    its edges, the first file:line that makes it."""
    actual, witness = {folder: set() for folder in sources}, {}
    for folder, files in sorted(sources.items()):
        for source in files:
            with open(os.path.join(root, source), encoding="utf-8", errors="replace") as f:
                lines = list(enumerate(f, 1))
            for number, line in lines:
                match = INCLUDE_RE.match(line)
                target = match and resolve(root, source, *match.groups())
                if match and not target and match.group(1) == '"':
                    problems.append(f"{source}:{number}: includes \"{match.group(2)}\", which is "
                                    "no file of the repository")
                if not target or folder_of(target) == folder:
                    continue
                target_folder = folder_of(target)
                actual[folder].add(target_folder)
                witness.setdefault((folder, target_folder), []).append(f"{source}:{number}")
                if target_folder not in declared[folder]:
                    problems.append(f"{source}:{number}: includes {target}, folder {folder} "
                                    f"does not declare {target_folder}")
    return actual, witness


def check(root):
    """Returns (violations, folders, files, includes across folders, {folder: declared})."""
    problems = []
    sources = scan_sources(root)
    declared = check_declarations(root, sources, problems)
    actual, witness = check_includes(root, sources, declared, problems)
    for cycle in find_cycles(actual):
        where = "; ".join(f"{a} -> {b} at {witness[(a, b)][0]}" for a, b in zip(cycle, cycle[1:]))
        problems.append(f"cycle in includes: {' -> '.join(cycle)} ({where})")
    for cycle in find_cycles(declared):
        problems.append(f"cycle in DEPS: {' -> '.join(cycle)}")
    return (problems, len(sources), sum(len(files) for files in sources.values()),
            sum(len(sites) for sites in witness.values()), declared)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), help="the repository to check (default: this script's)")
    parser.add_argument("--graph", action="store_true", help="print folder -> allowed folders")
    args = parser.parse_args()
    problems, folders, files, edges, declared = check(os.path.abspath(args.root))
    if args.graph:
        for folder in sorted(declared):
            print(f"{folder} -> {', '.join(sorted(declared[folder])) or '(nothing)'}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"layering: {len(problems)} violation(s)", file=sys.stderr)
        return 1
    print(f"layering: ok ({folders} folders, {files} files, {edges} includes across folders, "
          f"{sum(len(d) for d in declared.values())} declared edges)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
