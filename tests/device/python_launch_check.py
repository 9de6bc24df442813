#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python_launch_check.py - the Python launch helper (hipacm.Module) on a real GPU: kernels
compiled by hipacm for --arch (sm_90 by default), launched through hipacm.Module/Function on
device memory from hipacm.DeviceBuffer (and CuPy arrays where CuPy is installed), each result
compared with a CPU reference.

Exit status: 0 every check passed; 1 one failed; 77 skipped, with the reason on the last line
(no compiler for the arch, or no GPU driver or device).
"""

from __future__ import annotations

import argparse
import array
import ctypes
import random
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python"))

import hipacm  # noqa: E402

VADD = r'''
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
'''

AXPB = r'''
template <typename T> __global__ void axpb(T* y, const T* x, T a, T b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
'''

# Each block reverses its own chunk through dynamic shared memory (one int per thread).
REVERSE = r'''
extern "C" __global__ void block_reverse(const int* in, int* out, int n) {
  extern __shared__ int tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : -1;
  __syncthreads();
  int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) out[j] = tile[threadIdx.x];
}
'''

N = 100_003
BLOCK = 256


class Checks:
    def __init__(self) -> None:
        self.passed = self.failed = self.skipped = 0

    def run(self, name, fn):
        try:
            detail = fn()
        except Skip as skip:
            self.skipped += 1
            print(f"SKIP {name}: {skip}")
            return
        except Exception:
            self.failed += 1
            print(f"FAIL {name}")
            traceback.print_exc(file=sys.stdout)
            return
        self.passed += 1
        print(f"PASS {name}{': ' + detail if detail else ''}")


class Skip(Exception):
    pass


def grid_for(n: int) -> int:
    return (n + BLOCK - 1) // BLOCK


def upload(module: hipacm.Module, values: array.array) -> hipacm.DeviceBuffer:
    buffer = module.alloc(len(values) * values.itemsize)
    buffer.copy_from_host(values)
    return buffer


def download(buffer: hipacm.DeviceBuffer, typecode: str, n: int) -> array.array:
    out = array.array(typecode, bytes(n * array.array(typecode).itemsize))
    buffer.copy_to_host(out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--device", type=int, default=0)
    args = parser.parse_args()

    info = hipacm.backend_info()
    print(f"hipacm {hipacm.plugin_version} from {hipacm.library_path}; compiler "
          f"{info.compiler} {info.version} ({info.library_path or 'not found'})")
    try:
        vadd_k = hipacm.compile(VADD, arch=args.arch, name="vadd.cu")
        axpb_k = hipacm.compile(AXPB, arch=args.arch, name="axpb.cu",
                                name_expressions=["axpb<float>", "axpb<double>"])
        reverse_k = hipacm.compile(REVERSE, arch=args.arch, name="block_reverse.cu")
    except hipacm.BackendUnavailableError as error:
        print(f"SKIP: no compiler for {args.arch}: {error}")
        return 77
    print(f"compiled 3 kernels for {args.arch}: {hipacm.platform_of(vadd_k)} code objects of "
          f"{len(vadd_k.code)}, {len(axpb_k.code)} and {len(reverse_k.code)} bytes")
    try:
        vadd_m = hipacm.Module(vadd_k, device=args.device)
    except hipacm.DriverUnavailableError as error:
        print(f"SKIP: no GPU driver or device: {error}")
        return 77
    print(f"loaded: {vadd_m!r}")

    rng = random.Random(30)
    a = array.array("f", (rng.uniform(-1e3, 1e3) for _ in range(N)))
    b = array.array("f", (rng.uniform(-1e3, 1e3) for _ in range(N)))
    # float32 sums, as the GPU forms them: round each through array('f').
    expect_add = array.array("f", (x + y for x, y in zip(a, b)))
    checks = Checks()

    with vadd_m:
        vadd = vadd_m.get_function("vadd")

        def vadd_ctypes():
            with upload(vadd_m, a) as da, upload(vadd_m, b) as db, vadd_m.alloc(4 * N) as dc:
                vadd(grid_for(N), BLOCK, (da, db, dc, ctypes.c_int(N)))
                got = download(dc, "f", N)
            assert got == expect_add, "vadd differs from the CPU sum"
            return (f"{N} floats exact; driver param sizes {vadd.param_sizes} "
                    f"({'checked' if vadd.param_sizes is not None else 'not reported'})")

        def vadd_declared():
            declared = vadd_m.get_function(
                "vadd", arg_types=(hipacm.Pointer, hipacm.Pointer, hipacm.Pointer, ctypes.c_int))
            with upload(vadd_m, a) as da, upload(vadd_m, b) as db, vadd_m.alloc(4 * N) as dc:
                # Plain ints: declared, so the addresses and n are taken (as 8 and 4 bytes).
                declared((grid_for(N), 1, 1), (BLOCK, 1, 1), (da.ptr, db.ptr, dc.ptr, N))
                got = download(dc, "f", N)
            assert got == expect_add
            return "plain int addresses and n through arg_types"

        def vadd_wrong_width():
            if vadd.param_sizes is None:
                raise Skip("this driver does not report parameter sizes (cuFuncGetParamInfo)")
            with vadd_m.alloc(4) as d:
                try:
                    vadd(1, 1, (d, d, d, ctypes.c_int64(1)))
                except TypeError as error:
                    assert "argument 3 of 'vadd' is 4 bytes wide" in str(error), error
                    return f"refused before the launch: {error}"
            raise AssertionError("an 8-byte n was launched into a 4-byte parameter")

        def driver_errors():
            try:
                vadd_m.get_function("no_such_kernel")
            except hipacm.DriverError as error:
                assert error.name in ("CUDA_ERROR_NOT_FOUND", "hipErrorNotFound"), error
                first = error.name
            else:
                raise AssertionError("a missing function was found")
            with vadd_m.alloc(4) as d:
                try:
                    vadd(1, 4096, (d, d, d, ctypes.c_int(0)))   # more threads than a block takes
                except hipacm.DriverError as error:
                    assert error.call in ("cuLaunchKernel", "hipModuleLaunchKernel"), error
                    return f"{first}; block of 4096: {error.name}: {error}"
            raise AssertionError("a 4096-thread block was launched")

        def vadd_numpy_and_cupy():
            try:
                import cupy
                import numpy
            except ImportError as error:
                raise Skip(f"CuPy or numpy is not installed: {error}")
            ca = cupy.asarray(numpy.frombuffer(a, dtype=numpy.float32))
            cb = cupy.asarray(numpy.frombuffer(b, dtype=numpy.float32))
            cc = cupy.zeros(N, dtype=cupy.float32)
            # A blocking stream: it waits for the default stream's copies and memset above.
            stream = cupy.cuda.Stream()
            with stream:
                vadd(grid_for(N), BLOCK, (ca, cb, cc, numpy.int32(N)), stream=stream)
            stream.synchronize()
            got = cc.get()
            assert bool((got == numpy.frombuffer(expect_add, dtype=numpy.float32)).all())
            assert bool((cc == ca + cb).all()), "differs from CuPy's own sum"
            return f"CuPy {cupy.__version__} arrays, numpy.int32 n, on a CuPy stream"

        checks.run("vadd with DeviceBuffers and ctypes.c_int", vadd_ctypes)
        checks.run("vadd with declared arg_types and plain ints", vadd_declared)
        checks.run("vadd refuses an 8-byte n", vadd_wrong_width)
        checks.run("driver errors become DriverError", driver_errors)
        checks.run("vadd with CuPy arrays", vadd_numpy_and_cupy)

    def templated():
        with hipacm.Module(axpb_k, device=args.device) as module:
            n = 5_000
            x32 = array.array("f", (rng.uniform(-10, 10) for _ in range(n)))
            x64 = array.array("d", (rng.uniform(-10, 10) for _ in range(n)))
            f32 = module.get_function("axpb<float>")
            f64 = module.get_function("axpb<double>")
            with upload(module, x32) as dx, module.alloc(4 * n) as dy:
                f32(grid_for(n), BLOCK, (dy, dx, ctypes.c_float(2.0), ctypes.c_float(0.5),
                                          ctypes.c_int(n)))
                got32 = download(dy, "f", n)
            with upload(module, x64) as dx, module.alloc(8 * n) as dy:
                f64(grid_for(n), BLOCK, (dy, dx, ctypes.c_double(-3.0), ctypes.c_double(0.25),
                                          ctypes.c_int(n)))
                got64 = download(dy, "d", n)
        # Scaling by 2 and adding 0.5 is exact in float; -3x + 0.25 rounds once, as in C.
        assert got32 == array.array("f", (2.0 * v + 0.5 for v in x32))
        worst = max(abs(g - (-3.0 * v + 0.25)) for g, v in zip(got64, x64))
        assert worst <= 1e-12, worst
        return (f"{f32.lowered_name} and {f64.lowered_name}: {n} values each "
                f"(double within {worst:.1e})")

    def dynamic_shared():
        n = 10_000
        values = array.array("i", range(n))
        with hipacm.Module(reverse_k, device=args.device) as module:
            fn = module.get_function("block_reverse")
            with upload(module, values) as din, module.alloc(4 * n) as dout:
                dout.copy_from_host(array.array("i", [-7]) * n)
                fn(grid_for(n), BLOCK, (din, dout, ctypes.c_int(n)), shared_mem=BLOCK * 4)
                got = download(dout, "i", n)
        expect = array.array("i", [-7]) * n
        for start in range(0, n, BLOCK):
            for t in range(BLOCK):
                j = start + BLOCK - 1 - t
                if j < n:
                    i = start + t
                    expect[j] = values[i] if i < n else -1
        assert got == expect, "block_reverse differs"
        return f"{n} ints through {BLOCK * 4} bytes of dynamic shared memory a block"

    def ptx():
        if not args.arch.startswith("sm_"):
            raise Skip(f"{args.arch} is not an sm_ arch")
        arch = "compute_" + args.arch[len("sm_"):]
        kernel = hipacm.compile(VADD, arch=arch, name="vadd.cu")
        assert hipacm.platform_of(kernel.code) == "cuda" and b".target" in kernel.code[:4096]
        n = 4_099
        with hipacm.Module(kernel, device=args.device) as module:
            fn = module.get_function("vadd")
            with upload(module, a[:n]) as da, upload(module, b[:n]) as db, \
                    module.alloc(4 * n) as dc:
                fn(grid_for(n), BLOCK, (da, db, dc, ctypes.c_int(n)))
                got = download(dc, "f", n)
        assert got == expect_add[:n]
        return f"PTX for {arch} ({len(kernel.code)} bytes) loaded by the driver's JIT"

    checks.run("templated axpb<float>, axpb<double> by name expression", templated)
    checks.run("vadd from PTX", ptx)
    checks.run("block_reverse with dynamic shared memory", dynamic_shared)
    print(f"{checks.passed} passed, {checks.failed} failed, {checks.skipped} skipped")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
