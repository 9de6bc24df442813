# SPDX-License-Identifier: MIT
# rocm_facts.py - what the ROCm under test (and NVRTC) say about themselves, read from the libraries.
"""The CLI suites run against whichever ROCm the machine has. ROCm 5.2 lists no gfx942 and keeps
hipRTC inside libamdhip64; ROCm 6.4 and 7.2 list gfx942, drop gfx940 and ship libhiprtc. Tests take
such facts from here instead of assuming one release's."""
import ctypes
import os

ISA_PREFIX = "amdgcn-amd-amdhsa--"
# The files hipRTC is found in: inside the HIP runtime up to ROCm 5, a library of its own since 6.
HIPRTC_LIBRARIES = ("libhiprtc.so", "libamdhip64.so")
COMGR_LIBRARY = "libamd_comgr.so"
# Real processors that releases after ROCm 5.2 added (and, for gfx940 and gfx941, dropped again).
LATER_PROCESSORS = ("gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102",
                    "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201",
                    "gfx1250", "gfx1251")
# Debian's packages for each hipRTC file: ROCm 5 ships it in libamdhip64-5, 6 and 7 in libhiprtcN.
HIPRTC_PACKAGES = {"libamdhip64.so.5": "libamdhip64-5", "libhiprtc.so.6": "libhiprtc6",
                   "libhiprtc.so.7": "libhiprtc7"}
NVRTC_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11")
# Shaped like processors, known to no release.
FICTIONAL_PROCESSORS = ("gfx9999", "gfx1999", "gfx8999")


def comgr_processors(library):
    """The processor names ("gfx90a", ...) that the comgr at `library` lists, in its order."""
    comgr = ctypes.CDLL(library)
    count = ctypes.c_size_t()
    if comgr.amd_comgr_get_isa_count(ctypes.byref(count)) != 0:
        raise RuntimeError(f"amd_comgr_get_isa_count failed in {library}")
    names = []
    for i in range(count.value):
        isa = ctypes.c_char_p()
        if comgr.amd_comgr_get_isa_name(ctypes.c_size_t(i), ctypes.byref(isa)) != 0:
            continue
        text = (isa.value or b"").decode()
        if not text.startswith(ISA_PREFIX):
            continue
        name = text[len(ISA_PREFIX):].split(":", 1)[0]
        if name and name not in names:
            names.append(name)
    return names


def unlisted_real_processors(listed):
    """LATER_PROCESSORS that are not in `listed`: real archs an older hipRTC would abort on."""
    return [name for name in LATER_PROCESSORS if name not in listed]


def unknown_processor(listed):
    """A processor name that is not in `listed` and that no ROCm release knows."""
    return next(name for name in FICTIONAL_PROCESSORS if name not in listed)


def requested(names, library):
    """The one name in `names` (what the dynamic linker was asked for) that starts with
    `library`, e.g. libamd_comgr.so.2 or libamd_comgr.so.3."""
    (name,) = {name for name in names if name.startswith(library)}
    return name


def hiprtc_package(hiprtc_path):
    """The Debian package that ships the hipRTC at `hiprtc_path` (e.g. .../libhiprtc.so.6)."""
    name = os.path.basename(hiprtc_path)
    return next(package for prefix, package in HIPRTC_PACKAGES.items() if name.startswith(prefix))


def nvrtc_loadable():
    """Whether an NVRTC loads where hipacm looks for one: $HIPACM_NVRTC_LIBRARY, else the sonames
    on the linker's path, in $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64."""
    chosen = os.environ.get("HIPACM_NVRTC_LIBRARY")
    if chosen:
        candidates = [chosen]
    else:
        directories = [os.environ[v] + "/lib64" for v in ("CUDA_HOME", "CUDA_PATH")
                       if os.environ.get(v)] + ["/usr/local/cuda/lib64"]
        candidates = list(NVRTC_SONAMES) + [f"{d}/{name}" for d in directories
                                            for name in NVRTC_SONAMES]
    for candidate in candidates:
        try:
            ctypes.CDLL(candidate)
            return True
        except OSError:
            continue
    return False
