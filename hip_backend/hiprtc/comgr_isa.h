// SPDX-License-Identifier: MIT
// comgr_isa.h - the list of AMDGPU targets that this machine's comgr knows, and arch validation.
#pragma once

#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

class LibraryFactMemo;
struct HiprtcFacts;

/// Processor names that comgr supports, e.g. {"gfx600", ..., "gfx90a", "gfx1030"},
/// read once from libamd_comgr.so.2 (dlopen'd; $HIPACM_COMGR_LIBRARY overrides).
/// A BACKEND_UNAVAILABLE failure when comgr cannot be loaded. Settled once per
/// process (the list lives as long as the process); the first call may take the list from
/// `memo` instead of loading comgr, when the memo provably describes the same comgr
/// (library_facts.h), and records it there after loading.
Expected<const std::vector<std::string>*> supported_amdgpu_processors(
    LibraryFactMemo* memo = nullptr);

/// Checks an arch string of the form "gfxNNN[:feature(+|-)]..." before hipRTC
/// ever sees it: an unknown arch aborts the process inside hipRTC 5.2.3 and 6.4.3.
/// Features allowed: xnack and sramecc, each at most once, each with + or -.
/// With `hiprtc` (what is known of the hipRTC that would compile), generic
/// targets are refused where that hipRTC cannot compile them, amdgcnspirv is
/// accepted where it emits SPIR-V, and a processor missing from this comgr gets
/// the releases known to list it (amdgpu_arch_check.h). Otherwise a failure naming the
/// problem and listing the supported processors: INVALID_ARGUMENT for a refused arch,
/// BACKEND_UNAVAILABLE when comgr's list cannot be read. `memo` as for
/// supported_amdgpu_processors.
Expected<void> validate_amdgpu_arch(const std::string& arch, LibraryFactMemo* memo = nullptr,
                                    const HiprtcFacts* hiprtc = nullptr);

/// What `hipacm doctor` shows of a comgr: the file, its processors and its version.
struct ComgrReport {
  std::string library_path;
  std::vector<std::string> processors;  ///< comgr's order
  std::string version;                  ///< "major.minor"; empty when this comgr cannot say
};

/// Uncached and unremembered (a diagnosis reads the library itself): opens the first of
/// `library_paths` that loads, or with none given the usual candidates
/// ($HIPACM_COMGR_LIBRARY alone when set, else libamd_comgr.so.2, libamd_comgr.so), and reads
/// its ISA list and version. A BACKEND_UNAVAILABLE failure when none loads.
Expected<ComgrReport> report_comgr(const std::vector<std::string>& library_paths = {});

}  // namespace hipacm::backend
