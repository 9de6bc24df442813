// SPDX-License-Identifier: MIT
// rocm_facts.h - what the ROCm under test says about itself, read without hipacm's own loaders.
#pragma once

#include <string>
#include <string_view>
#include <vector>

// Tests run against whichever ROCm the machine has (5.2 keeps hipRTC inside libamdhip64 and lists
// no gfx942; 6.4 and 7.2 ship libhiprtc and list it). Expectations that differ between them come
// from here, so that a test asserts the loaded ROCm's value instead of one release's. These
// readers use dlopen and comgr's C API directly: a bug in hipacm's loaders cannot hide here.
namespace hipacm::rocm_facts {

/// The comgr whose target list a test compares with.
struct ComgrFacts {
  std::string file;                     ///< resolved path of the library read
  std::string version;                  ///< amd_comgr_get_version's "major.minor"; "" if absent
  std::vector<std::string> processors;  ///< "gfx90a", ...: comgr's order, no duplicates
  std::string error;                    ///< why nothing could be read; empty on success
};

/// Reads the comgr mapped into this process (the one hipRTC or hipacm loaded), else the one that
/// $HIPACM_COMGR_LIBRARY names, else the first of libamd_comgr.so.3, .so.2 and .so that loads.
/// Read afresh on every call: which comgr is mapped can change while a test runs.
ComgrFacts comgr();

/// Whether comgr() lists `processor` (a bare name, e.g. "gfx942").
bool comgr_lists(std::string_view processor);

/// Processors that ROCm releases after 5.2 added (gfx940, gfx942, gfx1100, gfx1200, ...).
std::vector<std::string> later_processors();

/// later_processors() that comgr() does not list: an abort inside an older hipRTC were they ever
/// passed on. Empty when comgr() lists them all.
std::vector<std::string> unlisted_real_processors();

/// A well-formed processor name that comgr() does not list and that no ROCm release knows.
std::string unknown_processor();

/// Whether any comgr (libamd_comgr.so*) is mapped into this process; loads nothing.
bool comgr_mapped();

/// The hipRTC mapped into this process: the object that defines hiprtcVersion.
struct HiprtcFacts {
  std::string file;     ///< resolved path, e.g. .../libhiprtc.so.6.4.43484; "" when none is mapped
  std::string version;  ///< hiprtcVersion's "major.minor" (9.0 in every release so far)
  int release_major = 0;  ///< the ROCm release that the file name carries (libhiprtc.so.6.4.43484
  int release_minor = 0;  ///< is 6.4, libamdhip64.so.5.2.21153 is 5.2); 0.0 when it carries none
};
HiprtcFacts mapped_hiprtc();

/// Whether hip/hip_runtime.h is installed where hipRTC's compiler looks for system headers
/// (the HIP development package, e.g. Debian's libamdhip64-dev).
bool hip_runtime_header_installed();

}  // namespace hipacm::rocm_facts
