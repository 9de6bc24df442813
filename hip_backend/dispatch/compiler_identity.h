// SPDX-License-Identifier: MIT
// compiler_identity.h - which compiler (backend and exact version) produces code for an arch.
#pragma once

#include <string>

namespace hipacm::backend {

/// Names the compiler that a request for `arch` would use. Persistent-cache
/// keys include it, so a compiler upgrade never serves stale code objects.
struct CompilerIdentity {
  std::string backend;  ///< "hiprtc" for gfx* archs; "unknown" when no backend owns the arch
  std::string version;  ///< exact version; empty when the compiler cannot be loaded
  std::string error;    ///< why `version` is empty
};

class LibraryFactMemo;

/// gfx* archs: {"hiprtc", toolchain_identity()}, e.g. "9.0 libhiprtc.so.6.4.43484
/// comgr libamd_comgr.so.3.0.0 3.0 toolchain 1a2b3c4d5e6f7a8b": hipRTC's
/// resolved file (whose name carries the release number hiprtcVersion omits),
/// the comgr it loads, and a fingerprint of the build IDs of every library
/// that generates code (rocm_toolchain.h), so that upgrading comgr or LLVM
/// alone changes it. An empty version with the reason when hipRTC cannot be
/// loaded or mixes two ROCm installs (mixed_rocm_problem). Any other arch:
/// {"unknown", ""}. Settled once per process, by loading hipRTC or, when
/// `memo` provably describes the library dlopen would load (library_facts.h),
/// without loading it; a loaded one is recorded in the memo. Never throws.
CompilerIdentity compiler_identity(const std::string& arch, LibraryFactMemo* memo = nullptr);

/// The identity of the NVRTC in `file` (a resolved path), which a raw NVRTC request
/// (raw_nvrtc.h) is compiled with: {"nvrtc", "nvrtc 13.0 (file)"}, loading it once per process
/// (load_nvrtc_file), or an empty version with the reason. Never throws.
CompilerIdentity raw_nvrtc_identity(const std::string& file);

}  // namespace hipacm::backend
