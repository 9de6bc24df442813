// SPDX-License-Identifier: MIT
// rocm_toolchain.h - the compiler that a gfx compile really runs: the hipRTC that loads, the
// comgr that this hipRTC loads in turn, the LLVM under it, and one fingerprint of them all.
#pragma once

#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

/// hipRTC is a thin front end: comgr and its LLVM generate the code, and a distribution may
/// upgrade them without touching hipRTC (whose hiprtcVersion says 9.0 in every release). So the
/// toolchain is read from what the process has actually mapped once hipRTC has loaded its comgr.
struct RocmToolchain {
  std::string hiprtc_path;     ///< the hipRTC file the dynamic linker mapped
  std::string hiprtc_version;  ///< hiprtcVersion's "major.minor"
  std::string comgr_path;      ///< the comgr hipRTC loaded; empty when it loaded none
  std::string comgr_version;   ///< amd_comgr_get_version's "major.minor"; empty when unknown
  std::string release;         ///< "ROCm 6.4" when the files' names or install tree say; else ""
  /// One line per library that shapes the code, e.g. "libLLVM.so.21.1 build-id cf3f...": hipRTC,
  /// comgr, and their LLVM, clang and lld dependencies, in that order.
  std::vector<std::string> components;
  /// The first 16 hex digits of the SHA-256 of `components`: equal only for the same files.
  std::string fingerprint;
  /// Every file named by `components`, as mapped (what the library-fact memo must re-check).
  std::vector<std::string> files;
};

/// Loads hipRTC, makes it load its comgr (one empty program, created and destroyed under the
/// ROCm lock) and reads the result. Settled once per process (the toolchain lives as long as the
/// process); a failure when hipRTC cannot be loaded.
Expected<const RocmToolchain*> rocm_toolchain();

/// Why this toolchain mixes two ROCm installs, or "" when it does not:
///  - $HIPACM_COMGR_LIBRARY names a comgr other than the one hipRTC loaded (another build ID, or
///    another file when either lacks one): archs would be checked against the wrong target list;
///  - hipRTC and comgr come from two different ROCm install trees (/opt/rocm-6.4.0 and
///    /opt/rocm-7.0.0, or one of them and the system's libraries).
std::string mixed_rocm_problem(const RocmToolchain& toolchain);

/// The first comgr mapped into this process (by hipRTC, or by an arch check); "" when none is.
std::string mapped_comgr_path();

/// Whether the two files are one library: the same GNU build ID, or, when either lacks one, the
/// same real file.
bool same_library(const std::string& a, const std::string& b);

/// The files a remembered fact about `toolchain` depends on: its `files`, and the comgr that
/// $HIPACM_COMGR_LIBRARY names when set (read where hipRTC mapped it, but still an input).
std::vector<std::string> toolchain_memo_files(const RocmToolchain& toolchain);

/// What decides which toolchain this process would load, for the library-fact memo's key:
/// hipRTC's candidates, then comgr's (which include $HIPACM_COMGR_LIBRARY when set).
std::vector<std::string> toolchain_memo_candidates();

/// The one-line identity that persistent-cache keys carry, e.g.
/// "9.0 libhiprtc.so.6.4.43484 comgr libamd_comgr.so.3.0.0 3.0 toolchain 1a2b3c4d5e6f7a8b".
std::string toolchain_identity(const RocmToolchain& toolchain);

}  // namespace hipacm::backend
