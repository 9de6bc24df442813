#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# compare-cli.py - runs two builds' hipacm CLIs through the same scenarios and reports every
# difference in exit status, stdout and stderr, after measured times and scratch paths are masked.
#
#   scripts/compare-cli.py OLD_BUILD_DIR NEW_BUILD_DIR [--arch gfx90a] [--ignore REGEX]... [--keep]
#
# For a change that must not change behaviour (a refactor): each build runs the scenarios in its own
# scratch directory, with its own cache and runtime directory, in the same order, so a scenario
# that reads the cache sees what the earlier ones of the same build left there. Exit 0 when every
# scenario matches, 1 when one differs (each difference is printed), 2 on a usage error. --ignore
# drops the lines it matches from both builds' output: for a difference the change intends, which
# the report then names.
#
# Both builds run with HIPACM_COMPILE_SERVICE=off, the deprecated name, on purpose: an old build
# rejects HIPACM_ISOLATION=service=off (its isolation word must be auto, in-process or process),
# while every build reads HIPACM_COMPILE_SERVICE. A build that knows service= warns once that the
# name is deprecated; that line comes from this script's setting, not from the change compared, so
# it is always dropped (as if --ignore 'HIPACM_COMPILE_SERVICE is deprecated' were given).
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "examples" / "kernels"
# The warning a newer build writes for the HIPACM_COMPILE_SERVICE that run_all sets.
DEPRECATED_SERVICE = re.compile(r"HIPACM_COMPILE_SERVICE is deprecated")


def scenarios(arch):
    """(name, argv, stdin) in order; {S} is the scratch directory, {K} the example kernels."""
    w = ["warmup", "{K}", "--arch", arch]
    bad = "{S}/bad.hip"
    return [
        ("version", ["--version"], None),
        ("help", ["--help"], None),
        ("no subcommand", [], None),
        ("unknown subcommand", ["compile"], None),
        ("warmup help", ["warmup", "--help"], None),
        ("cache help", ["cache", "--help"], None),
        ("inspect help", ["inspect", "--help"], None),
        ("doctor help", ["doctor", "--help"], None),
        ("warmup no input", ["warmup"], None),
        ("warmup missing input", ["warmup", "{S}/none", "--arch", arch], None),
        ("warmup unknown arch", ["warmup", "{K}/histogram.hip", "--arch", "gfx9999"], None),
        ("warmup bad jobs", w + ["--jobs", "-1"], None),
        ("warmup bad timeout", w + ["--timeout", "soon"], None),
        ("warmup dry run, empty cache", w + ["--dry-run"], None),
        ("warmup dry run json", w + ["--dry-run", "--json", "-"], None),
        ("warmup cold", w + ["--json", "{S}/cold.json", "-q"], None),
        ("warmup cold report", ["cache", "stats"], None),
        ("warmup warm json", w + ["--json", "-"], None),
        ("warmup warm verbose", w + ["-v"], None),
        ("warmup warm quiet", w + ["-q"], None),
        ("warmup dry run, full cache", w + ["--dry-run"], None),
        ("warmup manifest", ["warmup", "{K}/manifest.json", "--arch", arch, "--json", "-"], None),
        ("warmup defines and includes", ["warmup", "{K}/histogram.hip", "--arch", arch, "-D",
                                         "BINS=64", "-I", "{K}/include", "--json", "-"], None),
        ("warmup output dir", ["warmup", "{K}/histogram.hip", "--arch", arch, "-o", "{S}/objects",
                               "-q"], None),
        ("warmup failing kernel", ["warmup", bad, "--arch", arch, "--json", "-"], None),
        ("warmup failing kernel, keep going", ["warmup", bad, "--arch", arch, "-k"], None),
        ("warmup failing kernel, cached failure", ["warmup", bad, "--arch", arch,
                                                   "--cache-failures"], None),
        ("warmup failing kernel again", ["warmup", bad, "--arch", arch, "--cache-failures",
                                         "--json", "-"], None),
        ("warmup no cache", ["warmup", "{K}/dot_shfl.hip", "--arch", arch, "--no-cache",
                             "--json", "-"], None),
        ("warmup options from a file refused", ["warmup", "{S}/plugin.json", "--arch", arch], None),
        ("inspect object", ["inspect", "{S}/objects/histogram.{arch}.co".replace("{arch}", arch)],
         None),
        ("inspect object json", ["inspect", "--json",
                                 "{S}/objects/histogram.{arch}.co".replace("{arch}", arch)], None),
        ("inspect garbage", ["inspect", "{S}/garbage.co"], None),
        ("inspect missing", ["inspect", "{S}/none.co"], None),
        ("cache stats", ["cache", "stats"], None),
        ("cache stats json", ["cache", "stats", "--json"], None),
        ("cache list", ["cache", "list"], None),
        ("cache list json", ["cache", "list", "--json"], None),
        ("cache verify", ["cache", "verify"], None),
        ("cache export", ["cache", "export", "{S}/export.bin"], None),
        ("cache import into a new cache", ["cache", "--db", "{S}/other", "import",
                                           "{S}/export.bin"], None),
        ("cache stats of the new cache", ["cache", "--db", "{S}/other", "stats", "--json"], None),
        ("cache import garbage", ["cache", "--db", "{S}/other", "import", "{S}/garbage.co"], None),
        ("cache prune", ["cache", "prune", "--max-size", "100K"], None),
        ("cache prune bad size", ["cache", "prune", "--max-size", "lots"], None),
        ("cache stats after prune", ["cache", "stats", "--json"], None),
        ("cache clear", ["cache", "clear"], None),
        ("cache stats after clear", ["cache", "stats"], None),
        ("cache unusable directory", ["cache", "--db", "{S}/garbage.co", "stats"], None),
        ("doctor json", ["doctor", "--json"], None),
    ]


MASKS = [
    # Measured durations, rates and ratios.
    (re.compile(r"\d+(\.\d+)?(\s?)(ms|µs|us|s|min|x|%|/s)\b"), r"<N>\2\3"),
    (re.compile(r'("[a-z_]*(ms|_us|_s|seconds|time|wall|speedup|ratio|rate|cpu|elapsed|utime|'
                r'stime|started|finished|when|at|age|last_used|created)[a-z_]*"\s*:\s*)'
                r'-?\d+(\.\d+)?(e-?\d+)?'), r"\1<N>"),
    (re.compile(r"\b\d+\.\d+\b"), "<F>"),
    (re.compile(r"\b(pid|process) \d+\b"), r"\1 <PID>"),
    (re.compile(r'"pid"\s*:\s*\d+'), '"pid": <PID>'),
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?"), "<DATE>"),
    # Runtime-header PCHs are built in the background, so how many are ready yet is timing.
    (re.compile(r"\d+ runtime-header PCHs? ready"), "<N> runtime-header PCHs ready"),
    (re.compile(r'("hiprtc_pch_(ready|refused)"\s*:\s*)\d+'), r"\1<N>"),
    # A masked figure's width is masked too.
    (re.compile(r" +(<F>|<N>)"), r" \1"),
]


def normalise(text, scratch, build, ignore=()):
    text = "".join(line for line in text.splitlines(True)
                   if not any(pattern.search(line) for pattern in ignore))
    text = text.replace(str(scratch), "<S>").replace(str(build), "<B>")
    text = text.replace(str(KERNELS), "<K>")
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def prepare(scratch):
    (scratch / "bad.hip").write_text(
        '#include <hip/hip_runtime.h>\nextern "C" __global__ void broken(float* x) { x[0] = y; }\n')
    (scratch / "garbage.co").write_bytes(b"\x7fELF not really" * 8)
    (scratch / "plugin.json").write_text(
        '{"kernels": [{"source": "%s", "options": ["-fplugin=/tmp/x.so"]}]}\n'
        % (KERNELS / "histogram.hip"))


def run_all(build, scratch, arch, ignore):
    cli = build / "hipacm"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIPACM_")}
    env.update({
        "HIPACM_CACHE_DIR": str(scratch / "cache"),
        "HIPACM_RUNTIME_DIR": str(scratch / "run"),
        # The old name, which old builds know too (see the top of this file).
        "HIPACM_COMPILE_SERVICE": "off",
        "HIPACM_MACHINE_JOBS": "256",
        "NO_COLOR": "1",
        "COLUMNS": "100",
    })
    (scratch / "run").mkdir(mode=0o700)
    prepare(scratch)
    results = []
    for name, argv, stdin in scenarios(arch):
        argv = [a.replace("{S}", str(scratch)).replace("{K}", str(KERNELS)) for a in argv]
        done = subprocess.run([str(cli)] + argv, env=env, cwd=scratch, input=stdin,
                              capture_output=True, text=True, timeout=600)
        results.append((name, done.returncode, normalise(done.stdout, scratch, build, ignore),
                        normalise(done.stderr, scratch, build, ignore)))
    return results


def main():
    parser = argparse.ArgumentParser(
        description="Runs two builds' hipacm CLIs through the same scenarios and reports "
        "every difference.")
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--arch", default="gfx90a")
    parser.add_argument("--ignore", action="append", default=[], metavar="REGEX",
                        help="drop output lines that match (an intended difference)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directories")
    args = parser.parse_args()
    for build in (args.old, args.new):
        if not os.access(build / "hipacm", os.X_OK):
            print(f"compare-cli: no hipacm executable in {build}", file=sys.stderr)
            return 2
    base = Path(tempfile.mkdtemp(prefix="hipacm-compare-"))
    try:
        (base / "old").mkdir()
        (base / "new").mkdir()
        ignore = [DEPRECATED_SERVICE] + [re.compile(pattern) for pattern in args.ignore]
        old = run_all(args.old.resolve(), base / "old", args.arch, ignore)
        new = run_all(args.new.resolve(), base / "new", args.arch, ignore)
        differ = 0
        for (name, rc_a, out_a, err_a), (_, rc_b, out_b, err_b) in zip(old, new):
            if (rc_a, out_a, err_a) == (rc_b, out_b, err_b):
                continue
            differ += 1
            print(f"--- {name}: exit {rc_a} -> {rc_b}")
            for label, a, b in (("stdout", out_a, out_b), ("stderr", err_a, err_b)):
                if a != b:
                    sys.stdout.writelines(difflib.unified_diff(
                        a.splitlines(True), b.splitlines(True), f"old {label}", f"new {label}"))
        codes = sorted({rc for _, rc, _, _ in old})
        ignored = f"; lines matching {' or '.join(args.ignore)} ignored" if args.ignore else ""
        print(f"compare-cli: {len(old) - differ} of {len(old)} scenarios identical "
              f"(exit codes seen: {', '.join(map(str, codes))}{ignored})")
        return 1 if differ else 0
    finally:
        if args.keep:
            print(f"scratch directories kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
