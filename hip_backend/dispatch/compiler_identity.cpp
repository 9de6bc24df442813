// SPDX-License-Identifier: MIT
// compiler_identity.cpp - the compiler's backend name and exact version string for an arch.
#include "hip_backend/dispatch/compiler_identity.h"

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
#include "support/fork_epoch.h"
#include "support/no_destructor.h"

namespace hipacm::backend {
namespace {

// The memo's name for hipRTC's identity; the record is the version string.
constexpr std::string_view kHiprtcIdentityFact = "hiprtc-identity 2";

CompilerIdentity hiprtc_identity_from_library(LibraryFactMemo* memo,
                                              const std::vector<std::string>& candidates) {
  const Expected<const RocmToolchain*> loaded = rocm_toolchain();
  if (!loaded) return {"hiprtc", "", loaded.failure().message};
  const RocmToolchain* toolchain = loaded.value();
  if (std::string mixed = mixed_rocm_problem(*toolchain); !mixed.empty())
    return {"hiprtc", "", std::move(mixed)};
  CompilerIdentity identity{"hiprtc", toolchain_identity(*toolchain), ""};
  remember_library_fact(memo, kHiprtcIdentityFact, candidates, toolchain_memo_files(*toolchain),
                        identity.version);
  return identity;
}

// A compiler's identity, settled once per process (the library cannot change under it). A
// ForkSafeOnce rather than a mutex: a child forked while a parent thread was reading (loading
// hipRTC can take seconds) reads it again itself instead of waiting on a lock nobody will release.
struct SettledIdentity {
  ForkSafeOnce once;
  std::optional<CompilerIdentity> identity;

  template <typename Read>
  CompilerIdentity get(Read read) {
    once.call([&] { identity = read(); });
    return *identity;
  }
};

// hipRTC's identity: from the memo when it provably describes the library that dlopen would
// load, else from hipRTC itself.
CompilerIdentity hiprtc_identity(LibraryFactMemo* memo) {
  static NoDestructor<SettledIdentity> settled;
  return settled->get([memo] {
    const std::vector<std::string> candidates = toolchain_memo_candidates();
    const auto recalled = recall_library_fact(memo, kHiprtcIdentityFact, candidates);
    return recalled && !recalled->empty() ? CompilerIdentity{"hiprtc", *recalled, ""}
                                          : hiprtc_identity_from_library(memo, candidates);
  });
}

// NVRTC's identity, "nvrtc 13.0 (/path/libnvrtc.so.13)", from the memo or from NVRTC. An
// unloadable NVRTC gives no version, and with no version nothing is cached.
CompilerIdentity nvrtc_identity(LibraryFactMemo* memo) {
  static NoDestructor<SettledIdentity> settled;
  return settled->get([memo] {
    const Expected<NvrtcFacts> facts = nvrtc_facts(memo);
    return facts ? CompilerIdentity{"nvrtc", facts->identity, ""}
                 : CompilerIdentity{"nvrtc", "", "nvrtc unavailable: " + facts.failure().message};
  });
}

}  // namespace

CompilerIdentity raw_nvrtc_identity(const std::string& file) {
  try {
    const Expected<const NvrtcApi*> loaded = load_nvrtc_file(file);
    if (!loaded) return {"nvrtc", "", loaded.failure().message};
    return {"nvrtc", "nvrtc " + loaded.value()->version + " (" + file + ")", ""};
  } catch (...) {
    return {"nvrtc", "", failure_from_current_exception("cannot read NVRTC's version").message};
  }
}

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
    return hiprtc_identity(memo);
  } catch (...) {
    return {"hiprtc", "", failure_from_current_exception("cannot read hipRTC's version").message};
  }
}

}  // namespace hipacm::backend
