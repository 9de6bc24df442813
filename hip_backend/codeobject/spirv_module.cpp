// SPDX-License-Identifier: MIT
// spirv_module.cpp - reads a SPIR-V binary module word by word, trusting no count or length in it.
#include "hip_backend/codeobject/spirv_module.h"

#include <set>
#include <string_view>
#include <utility>

#include "support/bytes/byte_reader.h"

namespace hipacm::backend {

namespace {

constexpr std::size_t kWord = 4;
constexpr std::size_t kHeaderWords = 5;
constexpr std::uint32_t kSwappedMagic = 0x03022307;
constexpr unsigned kMaxMinorVersion = 6;  // SPIR-V 1.6 is the newest
constexpr std::uint16_t kOpMemoryModel = 14;
constexpr std::uint16_t kOpEntryPoint = 15;
constexpr std::uint16_t kOpDecorate = 71;
constexpr std::uint32_t kExecutionModelKernel = 6;
constexpr std::uint32_t kDecorationLinkageAttributes = 41;
constexpr std::uint32_t kLinkageExport = 0;

std::uint32_t swap_word(std::uint32_t w) {
  return (w >> 24) | ((w >> 8) & 0xff00) | ((w << 8) & 0xff0000) | (w << 24);
}

class Parser {
 public:
  Parser(const std::uint8_t* data, std::size_t size, SpirvModule* out)
      : bytes_(data, size), out_(out) {}

  bool run() { return header() && instructions() && finish(); }

  /// Why run() returned false.
  std::string& error() { return error_; }

 private:
  bool fail(std::string message) {
    error_ = "invalid SPIR-V: " + std::move(message);
    return false;
  }

  std::uint32_t word(std::size_t index) const {
    const auto w = bytes_.le<std::uint32_t>(static_cast<std::uint64_t>(index) * kWord);
    return out_->big_endian ? swap_word(w) : w;
  }

  bool header() {
    if (bytes_.size() % kWord != 0) {
      return fail(std::to_string(bytes_.size()) + " bytes is not a whole number of 4-byte words");
    }
    words_ = bytes_.size() / kWord;
    if (words_ < kHeaderWords) {
      return fail("truncated: " + std::to_string(bytes_.size()) +
                  " bytes, the module header needs 20");
    }
    const auto magic = bytes_.le<std::uint32_t>(0);
    if (magic != kSpirvMagic && magic != kSwappedMagic) return fail("bad magic (not SPIR-V)");
    out_->big_endian = magic == kSwappedMagic;
    const std::uint32_t version = word(1);
    out_->version_major = (version >> 16) & 0xff;
    out_->version_minor = (version >> 8) & 0xff;
    if ((version & 0xff0000ff) != 0 || out_->version_major != 1 ||
        out_->version_minor > kMaxMinorVersion) {
      return fail("unknown version word 0x" + hex(version));
    }
    out_->generator = word(2);
    out_->bound = word(3);
    if (out_->bound == 0) return fail("id bound is 0");
    if (word(4) != 0) return fail("schema word is " + std::to_string(word(4)) + ", must be 0");
    return true;
  }

  static std::string hex(std::uint32_t value) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out(8, '0');
    for (int i = 7; i >= 0; --i, value >>= 4)
      out[static_cast<std::size_t>(i)] = kDigits[value & 0xf];
    return out;
  }

  // The NUL-terminated literal that starts at word `first` of an instruction ending before word
  // `end`, and the word after its padding.
  bool literal(std::size_t first, std::size_t end, std::string* text, std::size_t* next) {
    text->clear();
    for (std::size_t w = first; w < end; ++w) {
      const std::uint32_t value = word(w);
      for (int b = 0; b < 4; ++b) {
        const auto c = static_cast<char>((value >> (8 * b)) & 0xff);
        if (c == '\0') {
          *next = w + 1;
          return true;
        }
        text->push_back(c);
      }
    }
    return false;
  }

  bool instructions() {
    std::size_t at = kHeaderWords;
    while (at < words_) {
      const std::uint32_t first = word(at);
      const std::size_t count = first >> 16;
      const auto opcode = static_cast<std::uint16_t>(first & 0xffff);
      if (count == 0)
        return fail("instruction at word " + std::to_string(at) + " has word count 0");
      if (count > words_ - at) {
        return fail("instruction at word " + std::to_string(at) + " (opcode " +
                    std::to_string(opcode) + ", " + std::to_string(count) +
                    " words) runs past the end of the " + std::to_string(words_) + "-word module");
      }
      if (!instruction(opcode, at, at + count)) return false;
      ++out_->instructions;
      at += count;
    }
    return true;
  }

  bool instruction(std::uint16_t opcode, std::size_t at, std::size_t end) {
    const std::string where = " at word " + std::to_string(at);
    if (opcode == kOpMemoryModel) {
      if (end - at != 3) return fail("OpMemoryModel" + where + " is not 3 words");
      ++memory_models_;
      out_->addressing_model = word(at + 1);
      out_->memory_model = word(at + 2);
    } else if (opcode == kOpEntryPoint) {
      if (end - at < 4) return fail("OpEntryPoint" + where + " is shorter than 4 words");
      std::string name;
      std::size_t next = 0;
      if (!literal(at + 3, end, &name, &next)) {
        return fail("OpEntryPoint" + where + " has a name without a NUL inside the instruction");
      }
      if (word(at + 2) >= out_->bound)
        return fail("OpEntryPoint" + where + " names an id past the bound");
      if (word(at + 1) == kExecutionModelKernel && !name.empty()) kernels_.insert(std::move(name));
    } else if (opcode == kOpDecorate && end - at >= 3 &&
               word(at + 2) == kDecorationLinkageAttributes) {
      std::string name;
      std::size_t next = 0;
      if (!literal(at + 3, end, &name, &next) || next >= end) {
        return fail("LinkageAttributes" + where + " lack a terminated name and a linkage type");
      }
      if (word(next) == kLinkageExport && !name.empty()) exported_.insert(std::move(name));
    }
    return true;
  }

  bool finish() {
    if (memory_models_ != 1) {
      return fail("the module has " + std::to_string(memory_models_) +
                  " OpMemoryModel instructions; exactly one is required");
    }
    out_->kernels.assign(kernels_.begin(), kernels_.end());
    out_->exported.assign(exported_.begin(), exported_.end());
    return true;
  }

  ByteView bytes_;
  SpirvModule* out_;
  std::string error_;
  std::size_t words_ = 0;
  std::size_t memory_models_ = 0;
  std::set<std::string> kernels_;
  std::set<std::string> exported_;
};

}  // namespace

bool looks_like_spirv(const std::uint8_t* data, std::size_t size) {
  if (data == nullptr || size < kWord) return false;
  const auto magic = ByteView(data, size).le<std::uint32_t>(0);
  return magic == kSpirvMagic || magic == kSwappedMagic;
}

Expected<SpirvModule> read_spirv_module(const std::uint8_t* data, std::size_t size) {
  static constexpr std::uint8_t kEmpty = 0;
  SpirvModule module;
  Parser parser(data != nullptr ? data : &kEmpty, data != nullptr ? size : 0, &module);
  if (!parser.run()) return Failure{HIPACM_ERROR_COMPILATION, std::move(parser.error())};
  return module;
}

}  // namespace hipacm::backend
