// SPDX-License-Identifier: MIT
// arch_validation.cpp - whether an arch can be compiled here, asked of the compiler that serves it.
#include "hip_backend/dispatch/arch_validation.h"

#include "hip_backend/dispatch/compiler_identity.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/hiprtc_release.h"
#include "hip_backend/nvrtc/nvrtc_compiler.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

Expected<void> validate_arch(const std::string& arch, LibraryFactMemo* memo) {
  if (is_nvidia_arch(arch)) return validate_nvidia_arch(arch, memo);
  // Which hipRTC would compile decides some answers (generic targets) and is named in refusals;
  // its identity carries the library's file name, from the memo when it has it.
  const CompilerIdentity compiler = compiler_identity(arch, memo);
  const HiprtcFacts hiprtc = hiprtc_facts_from(compiler.version);
  // comgr missing means no compiler at all (BACKEND_UNAVAILABLE), not a bad argument.
  if (Expected<void> valid = validate_amdgpu_arch(arch, memo, &hiprtc); !valid) return valid;
  // A valid arch with no hipRTC to compile it would fail every compile alike.
  if (compiler.version.empty()) {
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "arch '" + arch + "' needs hipRTC: " + compiler.error};
  }
  return {};
}

}  // namespace hipacm::backend
