# SPDX-License-Identifier: MIT
# test_inspect_resources.py - `hipacm inspect`'s per-kernel resources against what the standard
# tools print for the same files: llvm-readelf --notes on hipRTC code objects, ptxas -v (and
# cuobjdump -res-usage where it is installed) on CUBINs.
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from conftest import EXAMPLES, base_env

AMD_ARCHS = ["gfx90a", "gfx1030"]
CUDA_BIN = Path("/usr/local/cuda/bin")
# Kernels with LDS (reduce_sum, gemm_tiled, transpose_tiled), many registers (gemm_tiled), and one
# written here that needs scratch.
EXAMPLE_FILES = ["reduce_sum.hip", "gemm_tiled.hip", "transpose_tiled.hip", "saxpy.hip"]
SCRATCH_KERNEL = """\
extern "C" __global__ void private_table(const int* pick, float* out) {
  float table[512];
  for (int i = 0; i < 512; ++i) table[i] = out[i] * i;
  out[threadIdx.x] = table[pick[threadIdx.x] % 512];
}
"""

AMD_FIELDS = {".vgpr_count": "vgpr_count", ".sgpr_count": "sgpr_count",
              ".agpr_count": "agpr_count",
              ".group_segment_fixed_size": "group_segment_fixed_size",
              ".private_segment_fixed_size": "private_segment_fixed_size",
              ".wavefront_size": "wavefront_size",
              ".max_flat_workgroup_size": "max_flat_workgroup_size",
              ".sgpr_spill_count": "sgpr_spill_count", ".vgpr_spill_count": "vgpr_spill_count",
              ".kernarg_segment_size": "kernarg_segment_size", ".symbol": "symbol"}


def skip_visibly(reason):
    """Skips with the reason also in pytest's warnings summary, which -q still prints: a
    comparison that could not run is seen in the test log, not only counted."""
    warnings.warn(UserWarning("skipped: " + reason))
    pytest.skip(reason)


def tool(name, *candidates):
    for path in candidates:
        if path and Path(path).is_file():
            return str(path)
    return shutil.which(name)


def warm(cli_path, tmp, archs):
    sources = tmp / "sources"
    sources.mkdir(exist_ok=True)
    for name in EXAMPLE_FILES:
        shutil.copy(EXAMPLES / name, sources / name)
    (sources / "private_table.hip").write_text(SCRATCH_KERNEL)
    objects = tmp / "objects"
    completed = subprocess.run(
        [cli_path, "warmup", str(sources), "-I", str(EXAMPLES / "include"), "--arch",
         ",".join(archs), "--no-cache", "-q", "-o", str(objects)],
        capture_output=True, text=True, env=base_env(tmp / "cache"), check=False)
    return completed, objects


@pytest.fixture(scope="module")
def amd_objects(cli_path, backend_usable, tmp_path_factory):
    completed, objects = warm(cli_path, tmp_path_factory.mktemp("amd"), AMD_ARCHS)
    assert completed.returncode == 0, completed.stderr
    return objects


def readelf_kernels(readelf, path):
    """The top-level fields of each amdhsa.kernels entry that llvm-readelf --notes prints (YAML),
    by kernel name."""
    text = subprocess.run([readelf, "--notes", str(path)], capture_output=True, text=True,
                          check=True).stdout
    kernels, current, in_kernels = {}, None, False
    for line in text.splitlines():
        if line.startswith("amdhsa.kernels:"):
            in_kernels = True
            continue
        if in_kernels and re.match(r"^\S", line):  # the next top-level key ends the list
            in_kernels = False
        if not in_kernels:
            continue
        if line.startswith("  - "):
            current = {}
            kernels.setdefault("", []).append(current)
            line = "    " + line[4:]
        m = re.match(r"^    (\.\w+):\s+(.*)$", line)  # four spaces: the kernel's own keys
        if m and current is not None:
            current[m.group(1)] = m.group(2).strip().strip("'")
    return {k[".name"]: k for k in kernels.get("", [])}


def inspect_json(run, path):
    r = run("inspect", "--json", path)
    assert r.rc == 0, r.err
    return r.json()


@pytest.mark.parametrize("arch", AMD_ARCHS)
def test_amdgpu_figures_match_llvm_readelf(run, amd_objects, arch):
    readelf = tool("llvm-readelf", "/usr/bin/llvm-readelf-14")
    if readelf is None:
        skip_visibly("llvm-readelf is not installed (Debian: apt-get install llvm)")
    files = sorted(amd_objects.glob(f"*.{arch}.co"))
    assert len(files) == len(EXAMPLE_FILES) + 1
    compared = 0
    saw = {"lds": False, "scratch": False}
    for path in files:
        theirs = readelf_kernels(readelf, path)
        doc = inspect_json(run, path)
        ours = {k["name"]: k for k in doc["kernel_resources"]}
        assert sorted(ours) == sorted(theirs) == doc["kernels"], path
        for name, fields in theirs.items():
            for key, field in AMD_FIELDS.items():
                if key not in fields:
                    assert ours[name][field] is None, (path, name, key)
                    continue
                expected = fields[key] if field == "symbol" else int(fields[key])
                assert ours[name][field] == expected, (path, name, key)
                compared += 1
            saw["lds"] |= ours[name]["group_segment_fixed_size"] > 0
            saw["scratch"] |= ours[name]["private_segment_fixed_size"] > 0
            occupancy = ours[name]["occupancy"]
            assert occupancy is not None, (path, name)
            assert 1 <= occupancy["waves_per_simd"] <= occupancy["max_waves_per_simd"]
    assert saw == {"lds": True, "scratch": True}
    assert compared >= 5 * 8


def test_amdgpu_occupancy_follows_from_the_register_counts(run, amd_objects):
    # gfx90a: 512 VGPRs a lane in granules of 8, at most 8 waves; SGPR steps of gfx9.
    for path in sorted(amd_objects.glob("*.gfx90a.co")):
        for k in inspect_json(run, path)["kernel_resources"]:
            granules = max(1, -(-k["vgpr_count"] // 8))
            by_vgprs = min(8, max(1, 512 // (granules * 8)))
            assert k["occupancy"]["waves_per_simd_by_vgprs"] == by_vgprs, k["name"]
            assert k["occupancy"]["max_waves_per_simd"] == 8
            assert k["occupancy"]["waves_per_simd_by_sgprs"] is not None
    # gfx1030 (wave32): 1024 VGPRs in granules of 16, 16 waves; SGPRs do not limit.
    for path in sorted(amd_objects.glob("*.gfx1030.co")):
        for k in inspect_json(run, path)["kernel_resources"]:
            assert k["wavefront_size"] == 32
            granules = max(1, -(-k["vgpr_count"] // 16))
            assert k["occupancy"]["waves_per_simd_by_vgprs"] == min(16, 1024 // (granules * 16))
            assert k["occupancy"]["waves_per_simd_by_sgprs"] is None


def test_amdgpu_text_output_has_a_resource_table(run, amd_objects):
    path = amd_objects / "reduce_sum.gfx90a.co"
    doc = inspect_json(run, path)
    [k] = doc["kernel_resources"]
    r = run("inspect", path)
    assert r.rc == 0, r.err
    assert "kernels  1\n    reduce_sum\n" in r.out  # the old lines stay as they were
    assert "  resources (AMDGPU metadata note;" in r.out
    header, row = r.out.split("  resources (AMDGPU metadata note;")[1].splitlines()[1:3]
    assert header.split() == ["VGPR", "AGPR", "SGPR", "LDS", "scratch", "wave", "max-WG",
                              "spill-S", "spill-V", "waves", "byV", "byS", "kernel"]
    occupancy = k["occupancy"]
    assert row.split() == [str(v) for v in (
        k["vgpr_count"], k["agpr_count"], k["sgpr_count"], k["group_segment_fixed_size"],
        k["private_segment_fixed_size"], k["wavefront_size"], k["max_flat_workgroup_size"],
        k["sgpr_spill_count"], k["vgpr_spill_count"], occupancy["waves_per_simd"],
        occupancy["waves_per_simd_by_vgprs"], occupancy["waves_per_simd_by_sgprs"],
        "reduce_sum")]
    assert k["group_segment_fixed_size"] == 256 * 4  # __shared__ float partial[256]


# --- CUBIN -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cuda_objects(cli_path, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cuda")
    completed, objects = warm(cli_path, tmp, ["sm_80", "compute_80"])
    if completed.returncode == 3 or "NVRTC" in completed.stderr and completed.returncode != 0:
        skip_visibly("NVRTC is not usable here: " + completed.stderr[-300:])
    assert completed.returncode == 0, completed.stderr
    return objects


def ptxas_report(ptxas, ptx, cubin):
    """ptxas -v's figures for each entry of `ptx`, by kernel; the CUBIN goes to `cubin`."""
    # NVRTC's PTX ends with the NUL of a C string, which ptxas reads as text.
    text = Path(cubin).with_suffix(".ptx")
    text.write_bytes(Path(ptx).read_bytes().rstrip(b"\0"))
    completed = subprocess.run([ptxas, "-arch=sm_80", "-v", str(text), "-o", str(cubin)],
                               capture_output=True, text=True, check=True)
    report, name = {}, None
    for line in (completed.stdout + completed.stderr).splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            name = m.group(1)
            report[name] = {"smem": 0, "cmem0": 0}
        elif name and (m := re.search(r"(\d+) bytes stack frame", line)):
            report[name]["stack"] = int(m.group(1))
        elif name and (m := re.search(r"Used (\d+) registers", line)):
            report[name]["registers"] = int(m.group(1))
            if s := re.search(r"(\d+) bytes smem", line):
                report[name]["smem"] = int(s.group(1))
            if c := re.search(r"(\d+) bytes cmem\[0\]", line):
                report[name]["cmem0"] = int(c.group(1))
    return report


def test_cubin_figures_match_ptxas(run, cuda_objects, tmp_path):
    ptxas = tool("ptxas", CUDA_BIN / "ptxas")
    if ptxas is None:
        skip_visibly("ptxas is not installed (/usr/local/cuda/bin/ptxas)")
    compared = 0
    saw_shared = saw_stack = False
    for ptx in sorted(cuda_objects.glob("*.compute_80.co")):
        cubin = tmp_path / (ptx.name[:-len(".compute_80.co")] + ".cubin")
        theirs = ptxas_report(ptxas, ptx, cubin)
        doc = inspect_json(run, cubin)
        assert doc["arch"] == "sm_80"
        ours = {k["name"]: k for k in doc["kernel_resources"]}
        assert sorted(ours) == sorted(theirs), ptx
        for name, figures in theirs.items():
            assert ours[name]["registers"] == figures["registers"], (ptx, name)
            assert ours[name]["shared_bytes"] == figures["smem"], (ptx, name)
            assert ours[name]["stack_frame_bytes"] == figures["stack"], (ptx, name)
            assert ours[name]["constant0_bytes"] == figures["cmem0"], (ptx, name)
            compared += 4
            saw_shared |= figures["smem"] > 0
            saw_stack |= figures["stack"] > 0
    assert saw_shared and saw_stack
    assert compared >= 5 * 4


def test_nvrtc_cubins_read_like_ptxas_cubins(run, cuda_objects, tmp_path):
    # NVRTC's own CUBINs: the same kernels, registers and shared memory that ptxas reports for
    # NVRTC's PTX of the same source.
    ptxas = tool("ptxas", CUDA_BIN / "ptxas")
    if ptxas is None:
        skip_visibly("ptxas is not installed (/usr/local/cuda/bin/ptxas)")
    for cubin in sorted(cuda_objects.glob("*.sm_80.co")):
        stem = cubin.name[:-len(".sm_80.co")]
        theirs = ptxas_report(ptxas, cuda_objects / f"{stem}.compute_80.co", tmp_path / "x.cubin")
        ours = {k["name"]: k for k in inspect_json(run, cubin)["kernel_resources"]}
        assert sorted(ours) == sorted(theirs), stem
        for name, figures in theirs.items():
            assert ours[name]["shared_bytes"] == figures["smem"], (stem, name)
            assert ours[name]["registers"] > 0, (stem, name)
    r = run("inspect", cuda_objects / "reduce_sum.sm_80.co")
    assert "  resources (CUBIN sections and .nv.info attributes; sizes in bytes)" in r.out
    assert re.search(r"\n +\d+ +1024 +0 +\d+ +\d+ +- +reduce_sum\n", r.out), r.out


def test_cubin_figures_match_cuobjdump(run, cuda_objects):
    cuobjdump = tool("cuobjdump", CUDA_BIN / "cuobjdump")
    if cuobjdump is None:
        skip_visibly("cuobjdump is not installed (CUDA's cuda-cuobjdump package; "
                     "/usr/local/cuda/bin has none here)")
    for cubin in sorted(cuda_objects.glob("*.sm_80.co")):
        text = subprocess.run([cuobjdump, "-res-usage", str(cubin)], capture_output=True,
                              text=True, check=True).stdout
        ours = {k["name"]: k for k in inspect_json(run, cubin)["kernel_resources"]}
        theirs = {}
        name = None
        for line in text.splitlines():
            if m := re.search(r"Function ([^:\s]+):", line):
                name = m.group(1)
            elif name and (m := re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)",
                                          line)):
                theirs[name] = [int(v) for v in m.groups()]
        assert sorted(theirs) == sorted(ours), cubin
        for name, (reg, stack, shared, local) in theirs.items():
            k = ours[name]
            assert [k["registers"], k["stack_frame_bytes"], k["shared_bytes"],
                    k["local_bytes"]] == [reg, stack, shared, local], (cubin, name)
