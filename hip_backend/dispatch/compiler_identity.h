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

/// gfx* archs: {"hiprtc", "<hiprtcVersion> <library file name>"}, where the
/// file name is the resolved library (e.g. libamdhip64.so.5.2.50203), which
/// carries the full release number hiprtcVersion omits. Any other arch:
/// {"unknown", ""}. Settled once per process, by loading hipRTC or, when
/// `memo` provably describes the library dlopen would load (library_facts.h),
/// without loading it; a loaded one is recorded in the memo. Never throws.
CompilerIdentity compiler_identity(const std::string& arch, LibraryFactMemo* memo = nullptr);

}  // namespace hipacm::backend
