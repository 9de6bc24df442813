// SPDX-License-Identifier: MIT
// synthetic_code_objects.h - small ELF images, SPIR-V modules and offload bundles built byte by
// byte for the code-object tests and the fuzz seeds, so headers that no local compiler emits can be
// tested.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace hipacm::backend::testing {

using Bytes = std::vector<std::uint8_t>;

inline void put16(Bytes& b, std::size_t at, std::uint16_t v) {
  for (int i = 0; i < 2; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void put32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline void put64(Bytes& b, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// push_back rather than insert: GCC 12 reports a false -Warray-bounds on
// vector<uint8_t>::insert from a string range.
template <typename Range>
void append(Bytes& out, const Range& range) {
  for (auto c : range) out.push_back(static_cast<std::uint8_t>(c));
}

struct Sym {
  std::string name;
  std::uint8_t type;  // STT_*
};

/// A minimal ELF64 LE of e_machine EM_AMDGPU: [0] null, [1] .strtab, [2] .symtab, [3] .shstrtab.
/// EI_OSABI and EI_ABIVERSION stay 0 (make_amdgpu_elf sets them).
inline Bytes make_elf(const std::vector<Sym>& symbols, std::uint32_t flags = 0x3f) {
  std::string strtab(1, '\0');
  Bytes symtab(24, 0);  // the null symbol
  for (const Sym& s : symbols) {
    Bytes entry(24, 0);
    put32(entry, 0, static_cast<std::uint32_t>(strtab.size()));
    entry[4] = static_cast<std::uint8_t>((1 << 4) | s.type);  // GLOBAL
    append(symtab, entry);
    strtab += s.name + '\0';
  }
  const std::string shstrtab = std::string("\0.strtab\0.symtab\0.shstrtab\0", 27);
  Bytes image(64, 0);
  const std::size_t strtab_at = image.size();
  append(image, strtab);
  const std::size_t symtab_at = image.size();
  append(image, symtab);
  const std::size_t shstrtab_at = image.size();
  append(image, shstrtab);
  while (image.size() % 8 != 0) image.push_back(0);
  const std::size_t shoff = image.size();
  image.resize(shoff + 4 * 64, 0);
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::memcpy(image.data(), ident, sizeof ident);
  put16(image, 16, 3);    // ET_DYN
  put16(image, 18, 224);  // EM_AMDGPU
  put32(image, 20, 1);
  put64(image, 40, shoff);
  put32(image, 48, flags);
  put16(image, 52, 64);
  put16(image, 58, 64);
  put16(image, 60, 4);
  put16(image, 62, 3);
  auto section = [&](int index, std::uint32_t name, std::uint32_t type, std::size_t offset,
                     std::size_t size, std::uint32_t link, std::uint64_t entsize) {
    const std::size_t at = shoff + index * 64;
    put32(image, at, name);
    put32(image, at + 4, type);
    put64(image, at + 24, offset);
    put64(image, at + 32, size);
    put32(image, at + 40, link);
    put64(image, at + 56, entsize);
  };
  section(1, 1, 3, strtab_at, strtab.size(), 0, 0);
  section(2, 9, 2, symtab_at, symtab.size(), 1, 24);
  section(3, 17, 3, shstrtab_at, shstrtab.size(), 0, 0);
  return image;
}

/// make_elf with the AMDGPU HSA OS ABI and code object `version` (EI_ABIVERSION = version - 2),
/// and the kernels `kernels` (a function and its ".kd" descriptor each).
inline Bytes make_amdgpu_elf(int version, std::uint32_t flags,
                             const std::vector<std::string>& kernels = {"k"}) {
  std::vector<Sym> symbols;
  for (const std::string& kernel : kernels) {
    symbols.push_back({kernel, 2});
    symbols.push_back({kernel + ".kd", 1});
  }
  Bytes image = make_elf(symbols, flags);
  image[7] = 64;  // ELFOSABI_AMDGPU_HSA
  image[8] = static_cast<std::uint8_t>(version - 2);
  return image;
}

/// SPIR-V words: a module header, then instructions appended with op().
class SpirvBuilder {
 public:
  explicit SpirvBuilder(std::uint32_t version = 0x00010400, std::uint32_t bound = 16)
      : words_({0x07230203, version, 0, bound, 0}) {}

  /// Appends one instruction: its word count and opcode, then `operands`.
  SpirvBuilder& op(std::uint16_t opcode, const std::vector<std::uint32_t>& operands) {
    words_.push_back(static_cast<std::uint32_t>((operands.size() + 1) << 16) | opcode);
    words_.insert(words_.end(), operands.begin(), operands.end());
    return *this;
  }

  /// A literal string as words: the bytes, a NUL, zero padding to a whole word.
  static std::vector<std::uint32_t> literal(const std::string& text) {
    std::vector<std::uint32_t> out((text.size() + 4) / 4, 0);
    for (std::size_t i = 0; i < text.size(); ++i)
      out[i / 4] |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(text[i])) << (8 * (i % 4));
    return out;
  }

  /// The module's bytes, little-endian or big-endian.
  Bytes bytes(bool big_endian = false) const {
    Bytes out;
    for (const std::uint32_t w : words_)
      for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<std::uint8_t>(w >> (8 * (big_endian ? 3 - i : i))));
    return out;
  }

  std::vector<std::uint32_t>& words() { return words_; }

 private:
  std::vector<std::uint32_t> words_;
};

/// The shape of an amdgcnspirv module: Addresses, Kernel and Linkage capabilities, Physical64
/// OpenCL memory model, one Kernel entry point per name (ids 10, 11, ...) with a void function
/// each, and a global variable exported as `exported` when it is not empty.
inline SpirvBuilder kernel_module(const std::vector<std::string>& kernels,
                                  const std::string& exported = "") {
  constexpr std::uint16_t kOpCapability = 17, kOpMemoryModel = 14, kOpEntryPoint = 15,
                          kOpDecorate = 71, kOpTypeVoid = 19, kOpTypeFunction = 33,
                          kOpFunction = 54, kOpLabel = 248, kOpReturn = 253, kOpFunctionEnd = 56,
                          kOpTypeInt = 21, kOpTypePointer = 32, kOpVariable = 59;
  SpirvBuilder spirv(0x00010400, static_cast<std::uint32_t>(40 + kernels.size()));
  for (const std::uint32_t capability : {4u, 5u, 6u, 11u}) spirv.op(kOpCapability, {capability});
  spirv.op(kOpMemoryModel, {2, 2});  // Physical64, OpenCL
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    std::vector<std::uint32_t> operands = {6, static_cast<std::uint32_t>(10 + i)};
    for (const std::uint32_t w : SpirvBuilder::literal(kernels[i])) operands.push_back(w);
    spirv.op(kOpEntryPoint, operands);
  }
  if (!exported.empty()) {
    std::vector<std::uint32_t> operands = {4, 41};  // the variable, LinkageAttributes
    for (const std::uint32_t w : SpirvBuilder::literal(exported)) operands.push_back(w);
    operands.push_back(0);  // Export
    spirv.op(kOpDecorate, operands);
  }
  spirv.op(kOpTypeVoid, {1}).op(kOpTypeFunction, {2, 1});
  spirv.op(kOpTypeInt, {3, 32, 0}).op(kOpTypePointer, {5, 5, 3}).op(kOpVariable, {5, 4, 5});
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    spirv.op(kOpFunction, {1, static_cast<std::uint32_t>(10 + i), 0, 2});
    spirv.op(kOpLabel, {static_cast<std::uint32_t>(20 + i)}).op(kOpReturn, {});
    spirv.op(kOpFunctionEnd, {});
  }
  return spirv;
}

/// An uncompressed clang offload bundle of (id, bytes) entries, each 8-byte aligned.
inline Bytes make_offload_bundle(const std::vector<std::pair<std::string, Bytes>>& entries) {
  Bytes out;
  append(out, std::string("__CLANG_OFFLOAD_BUNDLE__"));
  const auto u64 = [&out](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  u64(entries.size());
  std::size_t header = out.size();
  for (const auto& [id, bytes] : entries) header += 24 + id.size();
  std::size_t offset = (header + 7) / 8 * 8;
  std::vector<std::size_t> offsets;
  for (const auto& [id, bytes] : entries) {
    offsets.push_back(offset);
    u64(offset);
    u64(bytes.size());
    u64(id.size());
    append(out, id);
    offset = (offset + bytes.size() + 7) / 8 * 8;
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out.resize(offsets[i], 0);
    append(out, entries[i].second);
  }
  return out;
}

}  // namespace hipacm::backend::testing
