#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# nvrtc_ctypes_client.py - an ordinary Python NVRTC program (ctypes, as CuPy-style code does, no
# hipacm code): the jobs of a manifest (nvrtc_kernels/) and the same canonical dump as
# nvrtc_client.cpp, so the dumps compare.
import argparse
import ctypes
import hashlib
import json
import sys
import threading
from pathlib import Path

SUCCESS = 0


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--library", default="libnvrtc.so.13")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("manifest")
    args = parser.parse_args()
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    return args


def load(soname):
    lib = ctypes.CDLL(soname)
    prog_p = ctypes.POINTER(ctypes.c_void_p)
    size_p = ctypes.POINTER(ctypes.c_size_t)
    strings = ctypes.POINTER(ctypes.c_char_p)
    signatures = {
        "nvrtcCreateProgram": [prog_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, strings,
                               strings],
        "nvrtcAddNameExpression": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcCompileProgram": [ctypes.c_void_p, ctypes.c_int, strings],
        "nvrtcGetProgramLogSize": [ctypes.c_void_p, size_p],
        "nvrtcGetProgramLog": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetPTXSize": [ctypes.c_void_p, size_p],
        "nvrtcGetPTX": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetCUBINSize": [ctypes.c_void_p, size_p],
        "nvrtcGetCUBIN": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetLTOIRSize": [ctypes.c_void_p, size_p],
        "nvrtcGetLTOIR": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetLoweredName": [ctypes.c_void_p, ctypes.c_char_p, strings],
        "nvrtcDestroyProgram": [prog_p],
        "nvrtcVersion": [ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)],
    }
    for name, argtypes in signatures.items():
        getattr(lib, name).argtypes = argtypes
        getattr(lib, name).restype = ctypes.c_int
    lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    return lib


def c_array(items):
    encoded = [item.encode() for item in items]
    return (ctypes.c_char_p * len(encoded))(*encoded) if encoded else None


def result_text(lib, result):
    return f"{lib.nvrtcGetErrorString(result).decode()}({result})"


def output(lib, prog, what, size_call, get_call):
    size = ctypes.c_size_t(0)
    r = size_call(prog, ctypes.byref(size))
    text = f"  {what} {result_text(lib, r)}"
    if r != SUCCESS:
        return text + "\n"
    buffer = ctypes.create_string_buffer(size.value)
    got = get_call(prog, buffer) if size.value > 0 else SUCCESS
    digest = hashlib.sha256(buffer.raw[:size.value]).hexdigest()
    return f"{text} {size.value} {result_text(lib, got)} {digest}\n"


def run_job(lib, job):
    out = f"job {job['name']}\n"
    prog = ctypes.c_void_p()
    headers = job["headers"]
    name = None if job.get("unnamed") else job.get("program_name", job["source"]).encode()
    r = lib.nvrtcCreateProgram(ctypes.byref(prog), job["text"].encode(), name,
                               len(headers), c_array([h[1] for h in headers]),
                               c_array([h[0] for h in headers]))
    out += f"  create {result_text(lib, r)}\n"
    if r != SUCCESS:
        return out
    for expression in job["expressions"]:
        added = lib.nvrtcAddNameExpression(prog, expression.encode())
        out += f"  add {expression} {result_text(lib, added)}\n"
    r = lib.nvrtcCompileProgram(prog, len(job["options"]), c_array(job["options"]))
    out += f"  compile {result_text(lib, r)}\n"
    log_size = ctypes.c_size_t(0)
    sized = lib.nvrtcGetProgramLogSize(prog, ctypes.byref(log_size))
    out += f"  log_size {result_text(lib, sized)} {log_size.value}\n"
    log = ctypes.create_string_buffer(max(log_size.value, 1))
    if log_size.value > 0:
        lib.nvrtcGetProgramLog(prog, log)
    if r != SUCCESS:
        text = log.value.decode()
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        out += "".join(f"  | {line}\n" for line in lines) if text else ""
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return out
    calls = {"ptx": (lib.nvrtcGetPTXSize, lib.nvrtcGetPTX),
             "cubin": (lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN),
             "ltoir": (lib.nvrtcGetLTOIRSize, lib.nvrtcGetLTOIR)}
    for what in job["outputs"]:
        out += output(lib, prog, what, *calls[what])
    for expression in job["expressions"]:
        lowered = ctypes.c_char_p()
        got = lib.nvrtcGetLoweredName(prog, expression.encode(), ctypes.byref(lowered))
        name = lowered.value.decode() if lowered.value is not None else "(null)"
        out += f"  lowered {expression} {result_text(lib, got)} {name}\n"
    r = lib.nvrtcDestroyProgram(ctypes.byref(prog))
    out += f"  destroy {result_text(lib, r)} {'cleared' if not prog.value else 'kept'}\n"
    return out


def main():
    args = parse_args()
    manifest = Path(args.manifest)
    jobs = json.loads(manifest.read_text())["jobs"]
    for job in jobs:
        job["text"] = (manifest.parent / job["source"]).read_text()
        job["headers"] = [(name, (manifest.parent / name).read_text())
                          for name in job.get("headers", [])]
        job.setdefault("expressions", [])
    lib = load(args.library)
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    dumps = [""] * len(jobs)
    # Probes for calls a release may lack, as programs written for several releases make them.
    probes = "".join(f"has {name} {'yes' if hasattr(lib, name) else 'no'}\n"
                     for name in ("nvrtcGetNVVM", "nvrtcGetLTOIR", "nvrtcGetPCHCreateStatus"))

    def worker(first):
        for index in range(first, len(jobs), args.threads):
            dumps[index] = run_job(lib, jobs[index])

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(args.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    sys.stdout.write(f"nvrtc {major.value}.{minor.value}\n" + probes + "".join(dumps) +
                     f"jobs {len(jobs)}\n")


if __name__ == "__main__":
    main()
