// SPDX-License-Identifier: MIT
// compiler_identity.cpp - the compiler's backend name and exact version string for an arch.
#include "hip_backend/dispatch/compiler_identity.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/library_facts.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/nvrtc/nvrtc_facts.h"
#include "hip_backend/target_arch.h"
#include "support/failure.h"
#include "support/no_destructor.h"

namespace hipacm::backend {
namespace {

// The memo's name for hipRTC's identity; the record is the version string.
constexpr std::string_view kHiprtcIdentityFact = "hiprtc-identity 2";

CompilerIdentity hiprtc_identity_from_library(LibraryFactMemo* memo,
                                              const std::vector<std::string>& candidates) {
  std::string error;
  const RocmToolchain* toolchain = rocm_toolchain(&error);
  if (toolchain == nullptr) return {"hiprtc", "", error};
  if (std::string mixed = mixed_rocm_problem(*toolchain); !mixed.empty())
    return {"hiprtc", "", std::move(mixed)};
  CompilerIdentity identity{"hiprtc", toolchain_identity(*toolchain), ""};
  remember_library_fact(memo, kHiprtcIdentityFact, candidates, toolchain_memo_files(*toolchain),
                        identity.version);
  return identity;
}

// hipRTC's identity, settled once per process: from the memo when it provably
// describes the library that dlopen would load, else from hipRTC itself.
struct HiprtcIdentityState {
  boost::mutex mutex;
  std::optional<CompilerIdentity> identity;
};

CompilerIdentity hiprtc_identity(LibraryFactMemo* memo) {
  static NoDestructor<HiprtcIdentityState> instance;
  HiprtcIdentityState& state = *instance;
  boost::lock_guard<boost::mutex> lock(state.mutex);
  if (!state.identity) {
    const std::vector<std::string> candidates = toolchain_memo_candidates();
    const auto recalled = recall_library_fact(memo, kHiprtcIdentityFact, candidates);
    state.identity = recalled && !recalled->empty()
                         ? CompilerIdentity{"hiprtc", *recalled, ""}
                         : hiprtc_identity_from_library(memo, candidates);
  }
  return *state.identity;
}

// NVRTC's identity, settled once per process like hipRTC's: "nvrtc 13.0 (/path/libnvrtc.so.13)"
// from the memo or from NVRTC. An unloadable NVRTC gives no version, and with no version nothing
// is cached.
CompilerIdentity nvrtc_identity(LibraryFactMemo* memo) {
  static NoDestructor<boost::mutex> mutex;
  static NoDestructor<std::optional<CompilerIdentity>> settled;
  boost::lock_guard<boost::mutex> lock(*mutex);
  if (!*settled) {
    std::string error;
    const std::optional<NvrtcFacts> facts = nvrtc_facts(memo, &error);
    *settled = facts ? CompilerIdentity{"nvrtc", facts->identity, ""}
                     : CompilerIdentity{"nvrtc", "", "nvrtc unavailable: " + error};
  }
  return **settled;
}

}  // namespace

CompilerIdentity compiler_identity(const std::string& arch, LibraryFactMemo* memo) {
  if (is_nvidia_arch(arch)) {
    try {
      return nvrtc_identity(memo);
    } catch (...) {
      return {"nvrtc", "", failure_from_current_exception("cannot read NVRTC's version").message};
    }
  }
  if (!is_amdgpu_arch(arch)) return {"unknown", "", "no compiler serves arch " + arch};
  try {
    // The library cannot change under a running process: resolve it once.
    return hiprtc_identity(memo);
  } catch (...) {
    return {"hiprtc", "", failure_from_current_exception("cannot read hipRTC's version").message};
  }
}

}  // namespace hipacm::backend
