#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""demo.py - the same failing compile inside Triton's AsyncCompileMode and inside hipacm's.

Triton 3.6.0 (triton/runtime/_async_compile.py): AsyncCompileMode.__exit__ first waits for every
submitted future, re-raising the first compile error, and only then calls
``active_mode.set(None)``. A compile error that escapes the wait therefore skips the reset: the
slot keeps pointing at the dead mode and the next ``AsyncCompileMode`` refuses to enter with
"Another AsyncCompileMode is already active".

hipacm's hipacm_mode_exit resets its slot first, then collects the futures, so after the same
failing exit the slot is empty (hipacm_active_mode() returns NULL) and the next mode enters.

Run with the GPU image's python3; HIPACM_LIBRARY points at libhipacm.so.1 (tests/device/run.sh
sets it). ``--arch`` is the hipacm target (default sm_90). Exit status: 0 when hipacm behaved as
described (whatever Triton did), 1 when it did not, 2 when hipacm could not be loaded.
"""
import argparse
import ctypes
import os
import sys

BROKEN_SOURCE = 'extern "C" __global__ void broken(float* x) { x[0] = undefined_symbol; }\n'
GOOD_SOURCE = 'extern "C" __global__ void fill(float* x, float v) { x[threadIdx.x] = v; }\n'


def nvrtc_compile(source, arch):
    """A real NVRTC compile through cuda.bindings; raises RuntimeError with NVRTC's log."""
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"demo.cu", 0, [], [])
    try:
        opts = [f"--gpu-architecture={arch}".encode()]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(f"NVRTC: {err}: {log.decode(errors='replace').strip()}")
        return source
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def triton_part(arch):
    print("== Triton: triton.runtime._async_compile.AsyncCompileMode")
    try:
        import triton
        from triton.runtime import _async_compile as ac
    except Exception as e:  # noqa: BLE001 - report whatever stops the import
        print(f"   SKIPPED: cannot import triton ({type(e).__name__}: {e})")
        return "skipped"
    from concurrent.futures import ThreadPoolExecutor

    print(f"   triton {triton.__version__} ({ac.__file__})")
    try:
        nvrtc_compile(GOOD_SOURCE, arch)
        compile_broken = lambda: nvrtc_compile(BROKEN_SOURCE, arch)  # noqa: E731
        print("   the failing compile: NVRTC (cuda.bindings) on a source with an undefined symbol")
    except Exception as e:  # noqa: BLE001
        print(f"   cuda.bindings NVRTC unusable ({e}); the failing compile raises directly")

        def compile_broken():
            raise RuntimeError("synthetic compile error")

    outcome = "not reproduced"
    with ThreadPoolExecutor(2) as executor:
        try:
            with ac.AsyncCompileMode(executor) as mode:
                mode.submit("broken", compile_broken, lambda kernel: None)
            print("   1st mode: __exit__ returned without raising")
        except Exception as e:  # noqa: BLE001
            print(f"   1st mode: __exit__ raised {type(e).__name__}: {str(e)[:200]}")
        left = ac.active_mode.get()
        print(f"   active_mode after the failing exit: {left!r}")
        try:
            with ac.AsyncCompileMode(executor):
                print("   2nd mode: entered")
        except RuntimeError as e:
            print(f"   2nd mode: REFUSED: {e}")
            if left is not None:
                outcome = "reproduced"
        ac.active_mode.set(None)  # leave the process usable
    print(f"   Triton slot bug: {outcome.upper()}")
    return outcome


def hipacm_part(arch):
    print("== hipacm: the same failing compile through bindings/python (ctypes)")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "bindings", "python"))
    try:
        import hipacm
    except ImportError as e:
        print(f"   cannot load hipacm: {e}")
        return None
    print(f"   plugin {hipacm.library_path}")
    slot = ctypes.CDLL(hipacm.library_path).hipacm_active_mode
    slot.restype = ctypes.c_void_p
    good = True
    try:
        with hipacm.AsyncCompileMode(arch=arch) as mode:
            mode.submit("broken", BROKEN_SOURCE)
        print("   1st mode: exit returned without raising (unexpected)")
        good = False
    except hipacm.CompilationError as e:
        print(f"   1st mode: exit raised {type(e).__name__}: {str(e)[:200]}")
    except hipacm.HipacmError as e:
        print(f"   1st mode: could not run: {type(e).__name__}: {e}")
        return False
    after = slot()
    print(f"   hipacm_active_mode() after the failing exit: {'NULL' if not after else hex(after)}")
    good &= not after
    try:
        with hipacm.AsyncCompileMode(arch=arch) as mode:
            future = mode.submit("fill", GOOD_SOURCE)
        kernel = future.result()
        print(f"   2nd mode: entered; compiled 'fill' for {kernel.arch}, {len(kernel.code)} bytes")
    except hipacm.HipacmError as e:
        print(f"   2nd mode: FAILED: {type(e).__name__}: {e}")
        good = False
    print(f"   hipacm: {'slot freed, next mode entered' if good else 'UNEXPECTED BEHAVIOUR'}")
    return good


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90", help="hipacm target arch (default sm_90)")
    ap.add_argument("--nvrtc-arch", default="sm_90", help="arch of Triton's NVRTC compiles")
    args = ap.parse_args()
    triton_outcome = triton_part(args.nvrtc_arch)
    ok = hipacm_part(args.arch)
    print(f"== summary: Triton slot bug {triton_outcome}; hipacm "
          f"{'correct' if ok else 'unavailable' if ok is None else 'WRONG'}")
    return 2 if ok is None else (0 if ok else 1)


if __name__ == "__main__":
    sys.exit(main())
