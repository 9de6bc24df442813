// SPDX-License-Identifier: MIT
// spirv_module.h - a bounds-checked reader of SPIR-V binary modules: header, memory model, kernel
// entry points and exported names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

inline constexpr std::uint32_t kSpirvMagic = 0x07230203;

/// What a SPIR-V module holds, as far as hipacm cares.
struct SpirvModule {
  unsigned version_major = 0;
  unsigned version_minor = 0;
  std::uint32_t generator = 0;  ///< the producer's registered tool id (high 16 bits) and version
  std::uint32_t bound = 0;      ///< every result id is below it
  bool big_endian = false;
  std::uint32_t addressing_model = 0;  ///< OpMemoryModel's first operand (2 = Physical64)
  std::uint32_t memory_model = 0;      ///< OpMemoryModel's second operand (2 = OpenCL)
  std::size_t instructions = 0;
  /// Names of OpEntryPoint instructions with execution model Kernel, sorted, each once.
  std::vector<std::string> kernels;
  /// Names given by LinkageAttributes decorations of linkage type Export (functions and global
  /// variables other modules may link against), sorted, each once.
  std::vector<std::string> exported;
};

/// True when `size` is at least one word and the first word is the SPIR-V magic number in either
/// byte order.
bool looks_like_spirv(const std::uint8_t* data, std::size_t size);

/// Parses a SPIR-V binary module. Never reads out of bounds and trusts no count in it: a size
/// that is not whole words, a bad header, an instruction with word count 0 or past the end, a
/// string literal without its NUL inside its instruction, or a module without exactly one
/// OpMemoryModel is an error ("invalid SPIR-V: ...", HIPACM_ERROR_COMPILATION) saying which.
Expected<SpirvModule> read_spirv_module(const std::uint8_t* data, std::size_t size);

}  // namespace hipacm::backend
