// SPDX-License-Identifier: MIT
// amdgpu_arch_check.h - backend-private: an arch string checked against comgr's target table and
// what is known of the hipRTC that would compile it.
#pragma once

#include <cstddef>
#include <string>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/hiprtc/hiprtc_release.h"
#include "support/failure.h"

namespace hipacm::backend {

/// Longer arch strings are refused, and shown cut to this length.
inline constexpr std::size_t kMaxAmdgpuArchLength = 64;

/// validate_amdgpu_arch against an explicit table and hipRTC. Beyond comgr's list it refuses
/// generic targets on a hipRTC known not to compile them, and amdgcnspirv unless `hiprtc`
/// emits SPIR-V; a processor this comgr lacks gets what the checked releases showed about it.
/// A refusal is INVALID_ARGUMENT.
Expected<void> validate_amdgpu_arch_with(const AmdgpuIsaTable& table, const HiprtcFacts& hiprtc,
                                         const std::string& arch);

/// Whether hipRTC from `hiprtc` is known not to compile generic targets (every release checked,
/// up to 7.2). An unknown or newer release may: its compile then says for itself, without harm,
/// since hipRTC only aborts on targets that comgr does not list.
bool generic_targets_refused(const HiprtcFacts& hiprtc);

/// `text` for a message: at most kMaxAmdgpuArchLength bytes, anything unprintable escaped.
std::string printable_arch(const std::string& text);

}  // namespace hipacm::backend
