// SPDX-License-Identifier: MIT
// elf_reader.h - a small bounds-checked ELF64 reader for GPU code objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

inline constexpr std::uint16_t kElfMachineAmdgpu = 224;  // EM_AMDGPU
inline constexpr std::uint16_t kElfMachineCuda = 190;    // EM_CUDA
inline constexpr std::uint8_t kStoCudaEntry = 0x10;      // st_other bit of a CUDA kernel

struct ElfSymbol {
  std::string name;
  std::uint8_t type = 0;     ///< STT_* (1 = OBJECT, 2 = FUNC)
  std::uint8_t binding = 0;  ///< STB_* (0 = LOCAL, 1 = GLOBAL, 2 = WEAK)
  std::uint8_t other = 0;    ///< st_other (STO_CUDA_ENTRY marks CUDA kernels)
  std::uint64_t size = 0;
};

/// One section header, with its name when the section-name table gives one ("" otherwise).
/// offset and size are as stored: check them against the image before reading.
struct ElfSection {
  std::string name;
  std::uint32_t type = 0;  ///< SHT_* (7 = NOTE, 8 = NOBITS)
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;  ///< CUBIN .text.<kernel>: the register count in bits 24-31
  std::uint64_t addralign = 0;
};

/// What a code object holds, as far as hipacm cares.
struct CodeObjectInfo {
  std::uint16_t machine = 0;       ///< e_machine
  std::uint16_t type = 0;          ///< e_type (3 = DYN)
  std::uint32_t flags = 0;         ///< e_flags (the AMDGPU processor lives here)
  std::uint8_t osabi = 0;          ///< e_ident[EI_OSABI] (64 = ELFOSABI_AMDGPU_HSA)
  std::uint8_t abi_version = 0;    ///< e_ident[EI_ABIVERSION] (AMDGPU HSA: code-object version - 2)
  std::vector<ElfSymbol> symbols;  ///< from .symtab and .dynsym, deduplicated by name
  /// Names X with both a FUNC symbol X and an OBJECT symbol "X.kd" (AMDGPU
  /// kernel descriptors), sorted.
  std::vector<std::string> amdgpu_kernels;
  /// FUNC symbols marked STO_CUDA_ENTRY (kernels in a CUBIN), sorted.
  std::vector<std::string> cuda_kernels;
  /// Every section header, in table order (empty when the image has none).
  std::vector<ElfSection> sections;
};

/// Parses an ELF64 little-endian image. Never reads out of bounds: any
/// truncated or inconsistent header/section/string table is an error ("invalid ELF: ...",
/// HIPACM_ERROR_COMPILATION).
Expected<CodeObjectInfo> read_code_object(const void* data, std::size_t size);

/// The AMDGPU processor name ("gfx90a") that EF_AMDGPU_MACH (e_flags' low byte) selects, or ""
/// if unknown; amdgpu_target.h decodes the rest of an AMDGPU header.
std::string amdgpu_processor_from_flags(std::uint32_t e_flags);

}  // namespace hipacm::backend
