#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ctypes_client.py - an ordinary Python hipRTC program (ctypes, as CuPy-style code does): the same
# jobs, options and canonical dump as the C++ clients (client_common.cpp), so the dumps compare.
import argparse
import ctypes
import hashlib
import json
import os
import sys
import threading
from pathlib import Path

ARCH_OPTION = "--offload-arch=gfx90a"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--option", action="append", default=[])
    parser.add_argument("--bitcode", action="store_true")
    parser.add_argument("--fork", action="store_true",
                        help="then fork, and compile everything again in the child")
    parser.add_argument("--library", default="libamdhip64.so.5")
    parser.add_argument("manifests", nargs="+")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    return args


def read_jobs(args):
    jobs = []
    for manifest in args.manifests:
        path = Path(manifest)
        folder = path.parent
        for kernel in json.loads(path.read_text())["kernels"]:
            options = list(kernel["options"]) + [ARCH_OPTION] + args.option
            label = f"{folder.name}/{kernel['source']}" + "".join(" " + o for o in options)
            if args.only and not any(wanted in label for wanted in args.only):
                continue
            # Header names in sorted order, as the C++ clients' JSON objects iterate.
            headers = sorted((name, (folder / rel).read_bytes())
                             for name, rel in kernel["headers"].items())
            jobs.append({
                "label": label,
                "source_name": kernel["source"],
                "source": (folder / kernel["source"]).read_bytes(),
                "options": options,
                "headers": headers,
                "name_expressions": kernel["name_expressions"],
            })
    return jobs


class Hiprtc:
    """The library's functions with their C signatures; ctypes finds them with dlsym."""

    def __init__(self, soname):
        lib = ctypes.CDLL(soname)
        size_p = ctypes.POINTER(ctypes.c_size_t)
        prog_p = ctypes.POINTER(ctypes.c_void_p)
        cstr_array = ctypes.POINTER(ctypes.c_char_p)
        signatures = {
            "hiprtcGetErrorString": (ctypes.c_char_p, [ctypes.c_int]),
            "hiprtcVersion": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int)] * 2),
            "hiprtcCreateProgram": (ctypes.c_int, [prog_p, ctypes.c_char_p, ctypes.c_char_p,
                                                   ctypes.c_int, cstr_array, cstr_array]),
            "hiprtcAddNameExpression": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
            "hiprtcCompileProgram": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, cstr_array]),
            "hiprtcGetProgramLogSize": (ctypes.c_int, [ctypes.c_void_p, size_p]),
            "hiprtcGetProgramLog": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
            "hiprtcGetCodeSize": (ctypes.c_int, [ctypes.c_void_p, size_p]),
            "hiprtcGetCode": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
            "hiprtcGetLoweredName": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                    ctypes.POINTER(ctypes.c_char_p)]),
            "hiprtcDestroyProgram": (ctypes.c_int, [prog_p]),
            "hiprtcGetBitcodeSize": (ctypes.c_int, [ctypes.c_void_p, size_p]),
            "hiprtcGetBitcode": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
        }
        optional = {"hiprtcGetBitcodeSize", "hiprtcGetBitcode"}
        for name, (restype, argtypes) in signatures.items():
            try:
                function = getattr(lib, name)
            except AttributeError:
                if name in optional:
                    setattr(self, name, None)
                    continue
                sys.exit(f"client: no {name} in {soname}")
            function.restype = restype
            function.argtypes = argtypes
            setattr(self, name, function)

    def text(self, result):
        name = self.hiprtcGetErrorString(result)
        return f"{name.decode() if name is not None else '(null)'}({result})"


def c_strings(values):
    array = (ctypes.c_char_p * max(len(values), 1))()
    for i, value in enumerate(values):
        array[i] = value
    return array


def dump_log(rtc, program, out):
    size = ctypes.c_size_t(0)
    result = rtc.hiprtcGetProgramLogSize(program, ctypes.byref(size))
    out.append(f"  log_size {rtc.text(result)} {size.value}")
    if result != 0 or size.value == 0:
        return
    buffer = ctypes.create_string_buffer(size.value + 1)
    out.append(f"  log {rtc.text(rtc.hiprtcGetProgramLog(program, buffer))}")
    # The C++ clients split with getline: no line after a final newline.
    for line in buffer.value.decode(errors="replace").split("\n"):
        out.append(f"  | {line}")
    if buffer.value.endswith(b"\n"):
        out.pop()


def dump_blob(rtc, what, get_size, get, program, out):
    size = ctypes.c_size_t(0)
    result = get_size(program, ctypes.byref(size))
    out.append(f"  {what}_size {rtc.text(result)} {size.value if result == 0 else 0}")
    if result != 0 or size.value == 0:
        return
    buffer = ctypes.create_string_buffer(size.value)
    got = get(program, buffer)
    line = f"  {what} {rtc.text(got)}"
    if got == 0:
        line += " sha256 " + hashlib.sha256(buffer.raw).hexdigest()
    out.append(line)


def run_job(rtc, job, bitcode):
    out = [job["label"]]
    names = [name.encode() for name, _ in job["headers"]]
    contents = [text for _, text in job["headers"]]
    program = ctypes.c_void_p()
    created = rtc.hiprtcCreateProgram(ctypes.byref(program), job["source"],
                                      job["source_name"].encode(), len(names),
                                      c_strings(contents), c_strings(names))
    out.append(f"  create {rtc.text(created)}")
    if created != 0:
        return out
    for expression in job["name_expressions"]:
        result = rtc.hiprtcAddNameExpression(program, expression.encode())
        out.append(f"  add_name_expression {expression} {rtc.text(result)}")
    options = [option.encode() for option in job["options"]]
    compiled = rtc.hiprtcCompileProgram(program, len(options), c_strings(options))
    out.append(f"  compile {rtc.text(compiled)}")
    dump_log(rtc, program, out)
    if compiled == 0:
        dump_blob(rtc, "code", rtc.hiprtcGetCodeSize, rtc.hiprtcGetCode, program, out)
        for expression in job["name_expressions"]:
            lowered = ctypes.c_char_p()
            result = rtc.hiprtcGetLoweredName(program, expression.encode(), ctypes.byref(lowered))
            name = lowered.value.decode() if result == 0 and lowered.value is not None else "-"
            out.append(f"  lowered {expression} {rtc.text(result)} {name}")
        if bitcode:
            if rtc.hiprtcGetBitcodeSize is not None and rtc.hiprtcGetBitcode is not None:
                dump_blob(rtc, "bitcode", rtc.hiprtcGetBitcodeSize, rtc.hiprtcGetBitcode,
                          program, out)
            else:
                out.append("  bitcode not in this library")
    out.append(f"  destroy {rtc.text(rtc.hiprtcDestroyProgram(ctypes.byref(program)))}")
    return out


def main():
    args = parse_args()
    jobs = read_jobs(args)
    rtc = Hiprtc(args.library)
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    version = rtc.hiprtcVersion(ctypes.byref(major), ctypes.byref(minor))
    print(f"version {rtc.text(version)} {major.value}.{minor.value}")

    print_jobs(rtc, jobs, args)
    if not args.fork:
        return
    # A program that forks after compiling, and compiles again in the child.
    sys.stdout.flush()
    child = os.fork()
    if child == 0:
        print("forked child")
        print_jobs(rtc, jobs, args)
        sys.stdout.flush()
        os._exit(0)
    _, status = os.waitpid(child, 0)
    if status != 0:
        sys.exit(f"client: the forked child failed (wait status {status})")


def print_jobs(rtc, jobs, args):
    # Threads take the next job as they finish one; the dump comes out in job order.
    dumps = [None] * len(jobs)
    lock = threading.Lock()
    next_job = [0]

    def work():
        while True:
            with lock:
                i = next_job[0]
                next_job[0] += 1
            if i >= len(jobs):
                return
            dumps[i] = run_job(rtc, jobs[i], args.bitcode)

    threads = [threading.Thread(target=work) for _ in range(args.threads - 1)]
    for thread in threads:
        thread.start()
    work()
    for thread in threads:
        thread.join()
    for i, dump in enumerate(dumps):
        print(f"job {i} " + "\n".join(dump))
    print(f"jobs {len(jobs)}")


if __name__ == "__main__":
    main()
