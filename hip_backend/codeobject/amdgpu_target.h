// SPDX-License-Identifier: MIT
// amdgpu_target.h - what an AMDGPU ELF header says about its target: code-object version,
// processor, xnack/sramecc settings and generic version, and whether that answers a requested arch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/codeobject/elf_reader.h"
#include "support/failure.h"

namespace hipacm::backend {

inline constexpr std::uint8_t kElfOsabiAmdgpuHsa = 64;  // ELFOSABI_AMDGPU_HSA

/// The oldest and newest code-object versions the check accepts. v2 keeps its processor in notes
/// rather than in e_flags; v7 does not exist yet, and what it will change is unknown.
inline constexpr int kMinCodeObjectVersion = 3;
inline constexpr int kMaxCodeObjectVersion = 6;

/// A target feature as e_flags records it (code object v4 and later; v3 has only on and off).
enum class FeatureSetting { kUnsupported, kAny, kOff, kOn };

/// The target an AMDGPU HSA code object's header names.
struct AmdgpuTarget {
  int code_object_version = 0;   ///< e_ident[EI_ABIVERSION] + 2
  std::string processor;         ///< "gfx90a", "gfx11-generic"; "" for an unknown EF_AMDGPU_MACH
  bool generic = false;          ///< a generic processor (code object v6 and later only)
  unsigned generic_version = 0;  ///< e_flags bits 24-31 (v6 and later; 0 before)
  FeatureSetting xnack = FeatureSetting::kUnsupported;
  FeatureSetting sramecc = FeatureSetting::kUnsupported;
};

/// Whether `processor` is a generic one ("gfx9-generic", ...), which needs code object v6.
bool is_generic_amdgpu_processor(const std::string& processor);

/// The code-object version of an AMDGPU HSA ELF (e_ident[EI_ABIVERSION] + 2, as LLVM numbers
/// them: 2 to 6 today), read from its 64-byte header alone; nullopt for bytes that are not one
/// (SPIR-V, an offload bundle, a CUBIN, another OS ABI, garbage).
std::optional<int> code_object_version(const std::uint8_t* data, std::size_t size);
std::optional<int> code_object_version(const std::vector<std::uint8_t>& code);

/// Which ROCm runtimes load code object `version`, for users who move code objects between
/// machines: "" for v4 and older (every ROCm release hipacm supports loads them), a sentence for
/// v5 and v6.
std::string code_object_runtime_note(int version);

/// Decodes the target of an EM_AMDGPU object already read by read_code_object. A failure
/// (HIPACM_ERROR_COMPILATION) when the header is not one hipacm accepts: another OS ABI, a
/// code-object version outside kMinCodeObjectVersion..kMaxCodeObjectVersion, a generic processor
/// before v6 or with generic version 0. An unknown processor is not an error here (processor
/// stays "").
Expected<AmdgpuTarget> decode_amdgpu_target(const CodeObjectInfo& info);

/// Whether `target` answers the requested arch, a target id such as "gfx90a" or
/// "gfx90a:sramecc+:xnack-": the same processor, and no feature setting that the arch excludes.
/// An object built for "any" runs with a feature on or off, so it answers "+", "-" and an open
/// request; one built with a feature on (off) answers "+" ("-") only, not an open request, whose
/// process may run either way. Otherwise a failure (HIPACM_ERROR_COMPILATION) says what differs.
Expected<void> target_answers_arch(const AmdgpuTarget& target, const std::string& arch);

/// The target id the object was built for: the processor, then ":sramecc±" and ":xnack±" for
/// features set on or off ("gfx942:sramecc-:xnack+"); "" when the processor is unknown.
std::string target_id(const AmdgpuTarget& target);

}  // namespace hipacm::backend
