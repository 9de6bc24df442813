// SPDX-License-Identifier: MIT
// hiprtc_release.h - what arch validation knows of the hipRTC that would compile: its library and
// the ROCm release that library comes from.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace hipacm::backend {

/// A ROCm release as major.minor, e.g. {6, 4}.
struct RocmRelease {
  int major = 0;
  int minor = 0;
  auto operator<=>(const RocmRelease&) const = default;
};

/// "6.4".
std::string to_string(RocmRelease release);

/// The release in rocm_release_of()'s answer ("ROCm 6.4", "ROCm 6.4.1"); nullopt for anything
/// else, the empty answer included.
std::optional<RocmRelease> parse_rocm_release(std::string_view text);

/// What arch validation knows about the hipRTC that would compile. Empty when nothing is known
/// (no hipRTC loads, or its file name carries no release): then no release-specific rule applies.
struct HiprtcFacts {
  std::string library;                 ///< the library's file name, for messages
  std::optional<RocmRelease> release;  ///< rocm_release_of() the library
  /// Whether this hipRTC compiles amdgcnspirv into output hipacm reads. No release checked
  /// (5.2.3, 6.4.3, 7.2.4) does, so facts read from a library never set it.
  bool emits_spirv = false;
};

/// Facts from text that names the hipRTC library: a file name, a path, or hipRTC's compiler
/// identity ("9.0 libhiprtc.so.6.4.43484 comgr ..."), whose hipRTC word is used.
HiprtcFacts hiprtc_facts_from(std::string_view text);

/// Facts about the hipRTC this process compiles with (rocm_toolchain.h); empty when it cannot
/// be loaded.
HiprtcFacts loaded_hiprtc_facts();

}  // namespace hipacm::backend
