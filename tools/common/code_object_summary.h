// SPDX-License-Identifier: MIT
// code_object_summary.h - what a code object holds (format, machine, arch, code-object version,
// kernels), from bytes of any source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hip_backend/codeobject/resources/amdgpu_occupancy.h"
#include "hip_backend/codeobject/resources/kernel_resources.h"
#include "support/failure.h"

namespace hipacm::cli {

/// An AMDGPU kernel's metadata, with the waves per SIMD its registers allow where the processor's
/// register file is known.
struct AmdgpuKernelRow {
  backend::AmdgpuKernelResources resources;
  std::optional<backend::WaveLimits> limits;
};

struct CodeObjectSummary {
  std::string format = "ELF";  ///< "ELF", "SPIR-V" or "offload bundle (SPIR-V)"
  std::size_t size = 0;
  std::uint16_t machine = 0;  ///< e_machine
  std::string machine_name;   ///< "AMDGPU", "CUDA" or "EM_<n>"
  std::string elf_type;       ///< "DYN", "EXEC", "REL" or "<n>"
  std::uint32_t flags = 0;    ///< e_flags
  std::string arch;  ///< "gfx90a" (AMDGPU e_flags), "amdgcnspirv", "sm_80" (CUDA), "" if unknown
  /// AMDGPU HSA only: the code-object version (e_ident[EI_ABIVERSION] + 2), else 0.
  int code_object_version = 0;
  unsigned generic_version = 0;  ///< AMDGPU code object v6 and later: e_flags bits 24-31
  std::string target_id;         ///< AMDGPU: "gfx90a:xnack+" (features set on or off); else ""
  /// What a reader should know: how SPIR-V is loaded, or why hipacm's check refuses the header.
  std::string note;
  /// AMDGPU: names with a "<name>.kd" kernel descriptor; other machines: global
  /// STT_FUNC symbols. Sorted.
  std::vector<std::string> kernels;
  std::size_t symbol_count = 0;
  /// AMDGPU: one row per `.kernels` entry of the metadata note, in note order.
  std::vector<AmdgpuKernelRow> amdgpu_resources;
  /// CUBIN: one row per entry function, sorted by name.
  std::vector<backend::CudaKernelResources> cuda_resources;
  /// Why resources are missing or partial ("no AMDGPU metadata note", a decoding error); else "".
  std::string resources_note;
};

/// Reads an ELF64 code object, a SPIR-V module or an offload bundle holding one (a file, a
/// compile result, a cache entry: any bytes). The reader's failure says why when it is none of
/// these.
Expected<CodeObjectSummary> summarize_code_object(const std::vector<std::uint8_t>& bytes);

nlohmann::ordered_json to_json(const CodeObjectSummary& summary);

}  // namespace hipacm::cli
