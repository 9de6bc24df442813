// SPDX-License-Identifier: MIT
// elf_reader.cpp - a bounds-checked ELF64 little-endian reader: header, section table, symbols.
#include "hip_backend/codeobject/elf_reader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "support/bytes/byte_reader.h"

namespace hipacm::backend {

namespace {

constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kShdrSize = 64;
constexpr std::size_t kSymSize = 24;
constexpr std::uint32_t kShtSymtab = 2;
constexpr std::uint32_t kShtStrtab = 3;
constexpr std::uint32_t kShtDynsym = 11;
constexpr std::uint32_t kShnXindex = 0xffff;
constexpr std::uint8_t kSttObject = 1;
constexpr std::uint8_t kSttFunc = 2;

struct Section {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t addralign = 0;
  std::uint64_t entsize = 0;
};

Section read_section(const ByteView& bytes, std::uint64_t at) {
  Section s;
  s.name = bytes.le<std::uint32_t>(at + 0);
  s.type = bytes.le<std::uint32_t>(at + 4);
  s.flags = bytes.le<std::uint64_t>(at + 8);
  s.offset = bytes.le<std::uint64_t>(at + 24);
  s.size = bytes.le<std::uint64_t>(at + 32);
  s.link = bytes.le<std::uint32_t>(at + 40);
  s.info = bytes.le<std::uint32_t>(at + 44);
  s.addralign = bytes.le<std::uint64_t>(at + 48);
  s.entsize = bytes.le<std::uint64_t>(at + 56);
  return s;
}

std::string hex(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return "0x" + out;
}

class Parser {
 public:
  Parser(const ByteView& bytes, CodeObjectInfo* out) : bytes_(bytes), out_(out) {}

  bool run() {
    return header() && section_table() && section_names() && symbols() && kernels() &&
           section_list();
  }

  /// Why run() returned false.
  std::string& error() { return error_; }

 private:
  bool fail(std::string message) {
    error_ = "invalid ELF: " + std::move(message);
    return false;
  }

  bool header() {
    if (bytes_.size() < kEhdrSize) {
      return fail("truncated: " + std::to_string(bytes_.size()) +
                  " bytes, an ELF64 header needs 64");
    }
    static constexpr std::array<std::uint8_t, 4> kMagic = {0x7f, 'E', 'L', 'F'};
    if (std::memcmp(bytes_.at(0, kMagic.size()), kMagic.data(), kMagic.size()) != 0) {
      return fail("bad magic (not an ELF file)");
    }
    if (bytes_.le<std::uint8_t>(4) != 2) return fail("not ELF64 (EI_CLASS is not ELFCLASS64)");
    if (bytes_.le<std::uint8_t>(5) != 1) {
      return fail("not little-endian (EI_DATA is not ELFDATA2LSB)");
    }
    if (bytes_.le<std::uint8_t>(6) != 1) return fail("unknown EI_VERSION");
    out_->type = bytes_.le<std::uint16_t>(16);
    out_->machine = bytes_.le<std::uint16_t>(18);
    out_->flags = bytes_.le<std::uint32_t>(48);
    out_->osabi = bytes_.le<std::uint8_t>(7);
    out_->abi_version = bytes_.le<std::uint8_t>(8);
    shoff_ = bytes_.le<std::uint64_t>(40);
    shentsize_ = bytes_.le<std::uint16_t>(58);
    shnum_ = bytes_.le<std::uint16_t>(60);
    shstrndx_ = bytes_.le<std::uint16_t>(62);
    return true;
  }

  bool section_table() {
    if (shoff_ == 0) {
      if (shnum_ != 0) return fail("e_shnum is " + std::to_string(shnum_) + " but e_shoff is 0");
      return true;  // no sections: nothing to list, not an error
    }
    if (shentsize_ != kShdrSize) {
      return fail("e_shentsize is " + std::to_string(shentsize_) + ", expected 64");
    }
    if (!bytes_.contains(shoff_, kShdrSize)) {
      return fail("section header table at " + hex(shoff_) + " is past the end of the " +
                  std::to_string(bytes_.size()) + "-byte image");
    }
    std::uint64_t count = shnum_;
    // Extended numbering: with 0xff00 or more sections, section 0 holds the counts.
    const Section zero = read_section(bytes_, shoff_);
    if (count == 0) count = zero.size;
    if (shstrndx_ == kShnXindex) shstrndx_ = zero.link;
    if (count == 0) return fail("e_shoff is set but the section count is 0");
    if (count > (bytes_.size() - shoff_) / kShdrSize) {
      return fail("section header table (" + std::to_string(count) + " entries at " + hex(shoff_) +
                  ") extends past the end of the " + std::to_string(bytes_.size()) + "-byte image");
    }
    sections_.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
      sections_.push_back(read_section(bytes_, shoff_ + i * kShdrSize));
    }
    return true;
  }

  // A string table is usable when it lies inside the image.
  bool string_table(std::uint32_t index, const char* what, std::string_view* table) {
    if (index >= sections_.size()) {
      return fail(std::string(what) + " refers to section " + std::to_string(index) + " of " +
                  std::to_string(sections_.size()));
    }
    const Section& s = sections_[index];
    if (s.type != kShtStrtab) {
      return fail(std::string(what) + " refers to section " + std::to_string(index) +
                  ", which is not a string table");
    }
    if (!bytes_.contains(s.offset, s.size)) {
      return fail("string table section " + std::to_string(index) + " (" + hex(s.offset) + " + " +
                  hex(s.size) + ") is past the end of the image");
    }
    *table = bytes_.text(s.offset, s.size);
    return true;
  }

  // A NUL-terminated name inside `table`, or an error.
  bool name_in(std::string_view table, std::uint32_t offset, std::string_view* name) {
    if (offset >= table.size()) return false;
    const std::size_t end = table.find('\0', offset);
    if (end == std::string_view::npos) return false;
    *name = table.substr(offset, end - offset);
    return true;
  }

  bool section_names() {
    if (sections_.empty() || shstrndx_ == 0) return true;
    return string_table(shstrndx_, "e_shstrndx", &section_names_);
  }

  std::string section_label(std::size_t index) {
    std::string_view name;
    if (!section_names_.empty() && name_in(section_names_, sections_[index].name, &name) &&
        !name.empty()) {
      return std::to_string(index) + " (" + std::string(name) + ")";
    }
    return std::to_string(index);
  }

  bool symbols() {
    for (std::size_t i = 0; i < sections_.size(); ++i) {
      const Section& s = sections_[i];
      if (s.type != kShtSymtab && s.type != kShtDynsym) continue;
      const std::string label = "symbol table section " + section_label(i);
      if (s.entsize != kSymSize) {
        return fail(label + " has sh_entsize " + std::to_string(s.entsize) + ", expected 24");
      }
      if (s.size % kSymSize != 0) {
        return fail(label + " size " + std::to_string(s.size) + " is not a multiple of 24");
      }
      if (!bytes_.contains(s.offset, s.size)) {
        return fail(label + " (" + hex(s.offset) + " + " + hex(s.size) +
                    ") is past the end of the " + std::to_string(bytes_.size()) + "-byte image");
      }
      std::string_view strings;
      if (!string_table(s.link, label.c_str(), &strings)) return false;
      const std::uint64_t count = s.size / kSymSize;
      for (std::uint64_t k = 0; k < count; ++k) {
        const std::uint64_t at = s.offset + k * kSymSize;
        const auto name_offset = bytes_.le<std::uint32_t>(at);
        const auto info = bytes_.le<std::uint8_t>(at + 4);
        std::string_view name;
        if (name_offset == 0) continue;  // unnamed (the null symbol, sections)
        if (!name_in(strings, name_offset, &name)) {
          return fail(label + ": symbol " + std::to_string(k) + " has name offset " +
                      std::to_string(name_offset) +
                      " outside its string table or without a NUL terminator");
        }
        if (name.empty()) continue;
        add_symbol(name, static_cast<std::uint8_t>(info & 0xf),
                   static_cast<std::uint8_t>(info >> 4), bytes_.le<std::uint8_t>(at + 5),
                   bytes_.le<std::uint64_t>(at + 16));
      }
    }
    return true;
  }

  void add_symbol(std::string_view name, std::uint8_t type, std::uint8_t binding,
                  std::uint8_t other, std::uint64_t size) {
    if (type == kSttFunc) funcs_.emplace(name);
    if (type == kSttFunc && (other & kStoCudaEntry) != 0) cuda_entries_.emplace(name);
    if (type == kSttObject) objects_.emplace(name);
    if (!seen_.insert(name).second) return;
    ElfSymbol symbol;
    symbol.name = std::string(name);
    symbol.type = type;
    symbol.binding = binding;
    symbol.other = other;
    symbol.size = size;
    out_->symbols.push_back(std::move(symbol));
  }

  bool kernels() {
    static constexpr std::string_view kSuffix = ".kd";
    for (std::string_view object : objects_) {
      if (object.size() <= kSuffix.size() || !object.ends_with(kSuffix)) continue;
      const std::string_view kernel = object.substr(0, object.size() - kSuffix.size());
      if (funcs_.count(kernel) != 0) out_->amdgpu_kernels.emplace_back(kernel);
    }
    // objects_ is ordered, so the list is already sorted.
    out_->cuda_kernels.assign(cuda_entries_.begin(), cuda_entries_.end());
    return true;
  }

  // The headers as stored; a name the table cannot give stays empty (readers find sections by
  // name, so an unnamed one is simply never found).
  bool section_list() {
    out_->sections.reserve(sections_.size());
    for (const Section& s : sections_) {
      ElfSection section;
      std::string_view name;
      if (!section_names_.empty() && name_in(section_names_, s.name, &name))
        section.name = std::string(name);
      section.type = s.type;
      section.flags = s.flags;
      section.offset = s.offset;
      section.size = s.size;
      section.link = s.link;
      section.info = s.info;
      section.addralign = s.addralign;
      out_->sections.push_back(std::move(section));
    }
    return true;
  }

  const ByteView& bytes_;
  CodeObjectInfo* out_;
  std::string error_;
  std::uint64_t shoff_ = 0;
  std::uint16_t shentsize_ = 0;
  std::uint16_t shnum_ = 0;
  std::uint32_t shstrndx_ = 0;
  std::vector<Section> sections_;
  std::string_view section_names_;
  std::unordered_set<std::string_view> seen_;
  std::set<std::string_view> funcs_;
  std::set<std::string_view> objects_;
  std::set<std::string_view> cuda_entries_;
};

}  // namespace

Expected<CodeObjectInfo> read_code_object(const void* data, std::size_t size) {
  if (data == nullptr && size != 0)
    return Failure{HIPACM_ERROR_COMPILATION, "invalid ELF: NULL data"};
  static constexpr std::uint8_t kEmpty = 0;
  const ByteView bytes(data != nullptr ? static_cast<const std::uint8_t*>(data) : &kEmpty, size);
  CodeObjectInfo info;
  Parser parser(bytes, &info);
  if (!parser.run()) return Failure{HIPACM_ERROR_COMPILATION, std::move(parser.error())};
  return info;
}

}  // namespace hipacm::backend
