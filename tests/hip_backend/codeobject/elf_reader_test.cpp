// SPDX-License-Identifier: MIT
// elf_reader_test.cpp - the ELF reader on real code objects, synthetic ELFs, and damaged or random
// bytes.
#include "hip_backend/codeobject/elf_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "tests/hip_backend/codeobject/synthetic_code_objects.h"
#include "tests/hip_backend/test_support.h"

namespace hipacm::backend {
namespace {

using testing::Bytes;
using testing::make_elf;
using testing::put16;
using testing::put32;
using testing::put64;

std::uint16_t get16(const Bytes& b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] | (b[at + 1] << 8));
}
std::uint64_t get64(const Bytes& b, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[at + i];
  return v;
}

std::size_t section_header(const Bytes& image, int index) {
  return static_cast<std::size_t>(get64(image, 40)) + index * 64;
}

bool parses(const Bytes& image, CodeObjectInfo* info = nullptr, std::string* error = nullptr) {
  Expected<CodeObjectInfo> read = read_code_object(image.data(), image.size());
  if (!read) {
    EXPECT_FALSE(read.failure().message.empty());
    if (error != nullptr) *error = read.failure().message;
  } else if (info != nullptr) {
    *info = std::move(read).value();
  }
  return read.has_value();
}

TEST(ElfReader, ReadsARealCodeObject) {
  const auto& sample = testing::sample_gfx90a();
  ASSERT_EQ(sample.status, HIPACM_SUCCESS);
  Expected<CodeObjectInfo> read = read_code_object(sample.code.data(), sample.code.size());
  ASSERT_TRUE(read) << read.failure().message;
  const CodeObjectInfo& info = read.value();
  EXPECT_EQ(info.machine, kElfMachineAmdgpu);
  EXPECT_EQ(info.type, 3);
  EXPECT_EQ(amdgpu_processor_from_flags(info.flags), "gfx90a");
  ASSERT_EQ(sample.lowered_names.size(), 1u);
  EXPECT_EQ(info.amdgpu_kernels, (std::vector<std::string>{sample.lowered_names[0], "vadd"}));
  auto symbol = [&](const std::string& name) {
    auto it = std::find_if(info.symbols.begin(), info.symbols.end(),
                           [&](const ElfSymbol& s) { return s.name == name; });
    return it == info.symbols.end() ? ElfSymbol{} : *it;
  };
  EXPECT_EQ(symbol("vadd").type, 2);
  EXPECT_EQ(symbol("vadd.kd").type, 1);
  EXPECT_EQ(symbol("vadd.kd").size, 64u);
  EXPECT_EQ(symbol("vadd").binding, 1);
  // Listed in both .symtab and .dynsym, reported once.
  EXPECT_EQ(std::count_if(info.symbols.begin(), info.symbols.end(),
                          [](const ElfSymbol& s) { return s.name == "vadd"; }),
            1);
}

TEST(ElfReader, PairsFunctionsWithDescriptors) {
  const Bytes image = make_elf({{"k1", 2},
                                {"k1.kd", 1},
                                {"lonely_func", 2},
                                {"orphan.kd", 1},
                                {"data", 1},
                                {"a", 2},
                                {"a.kd", 1},
                                {".kd", 1}});
  Expected<CodeObjectInfo> read = read_code_object(image.data(), image.size());
  ASSERT_TRUE(read) << read.failure().message;
  const CodeObjectInfo& info = read.value();
  EXPECT_EQ(info.amdgpu_kernels, (std::vector<std::string>{"a", "k1"}));
  EXPECT_EQ(info.symbols.size(), 8u);
}

TEST(ElfReader, RejectsEmptyAndTinyInputs) {
  const Expected<CodeObjectInfo> empty = read_code_object(nullptr, 0);
  EXPECT_FALSE(empty);
  const std::string error = empty ? std::string() : empty.failure().message;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_FALSE(read_code_object(nullptr, 100));
  const Bytes image = make_elf({});
  for (std::size_t n : {1, 4, 16, 63}) {
    EXPECT_FALSE(read_code_object(image.data(), n)) << n;
  }
}

TEST(ElfReader, RejectsWrongIdent) {
  Bytes image = make_elf({{"k", 2}, {"k.kd", 1}});
  ASSERT_TRUE(parses(image));
  std::string error;
  Bytes bad = image;
  bad[1] = 'X';
  EXPECT_FALSE(parses(bad, nullptr, &error));
  EXPECT_NE(error.find("magic"), std::string::npos) << error;
  bad = image;
  bad[4] = 1;  // ELFCLASS32
  EXPECT_FALSE(parses(bad, nullptr, &error));
  EXPECT_NE(error.find("ELF64"), std::string::npos) << error;
  bad = image;
  bad[5] = 2;  // big-endian
  EXPECT_FALSE(parses(bad, nullptr, &error));
  EXPECT_NE(error.find("little-endian"), std::string::npos) << error;
}

TEST(ElfReader, RejectsEveryTruncationOfARealCodeObject) {
  const Bytes& code = testing::sample_gfx90a().code;
  ASSERT_GT(code.size(), 64u);
  const std::size_t table_end = static_cast<std::size_t>(get64(code, 40)) + get16(code, 60) * 64;
  ASSERT_LE(table_end, code.size());
  for (std::size_t n = 0; n < table_end; ++n) {
    const Expected<CodeObjectInfo> read = read_code_object(code.data(), n);
    EXPECT_FALSE(read) << "accepted " << n << " bytes";
    // A refused object hands out no symbols.
    EXPECT_TRUE(!read || read->symbols.empty());
  }
}

TEST(ElfReader, RejectsCorruptSectionTables) {
  const Bytes good = make_elf({{"k", 2}, {"k.kd", 1}});
  ASSERT_TRUE(parses(good));
  struct Case {
    const char* what;
    void (*damage)(Bytes&);
    const char* message;
  };
  const Case cases[] = {
      {"shoff past end", [](Bytes& b) { put64(b, 40, b.size() - 10); }, "past the end"},
      {"shoff huge", [](Bytes& b) { put64(b, 40, ~std::uint64_t{0} - 8); }, "past the end"},
      {"shnum huge", [](Bytes& b) { put16(b, 60, 0xfff0); }, "extends past the end"},
      {"shentsize", [](Bytes& b) { put16(b, 58, 40); }, "e_shentsize"},
      {"shstrndx out of range", [](Bytes& b) { put16(b, 62, 9); }, "e_shstrndx"},
      {"shstrndx not strtab", [](Bytes& b) { put16(b, 62, 2); }, "not a string table"},
      {"symtab offset", [](Bytes& b) { put64(b, section_header(b, 2) + 24, 1u << 30); },
       "past the end"},
      {"symtab size overflow",
       [](Bytes& b) { put64(b, section_header(b, 2) + 32, ~std::uint64_t{0} - 23 - 24); },
       "symbol table"},
      {"symtab entsize 0", [](Bytes& b) { put64(b, section_header(b, 2) + 56, 0); }, "sh_entsize"},
      {"symtab ragged size", [](Bytes& b) { put64(b, section_header(b, 2) + 32, 50); },
       "multiple of 24"},
      {"symtab link out of range", [](Bytes& b) { put32(b, section_header(b, 2) + 40, 77); },
       "refers to section 77"},
      {"symtab link to itself", [](Bytes& b) { put32(b, section_header(b, 2) + 40, 2); },
       "not a string table"},
      {"strtab past end", [](Bytes& b) { put64(b, section_header(b, 1) + 32, 1u << 20); },
       "past the end"},
      {"name without NUL",
       [](Bytes& b) { put64(b, section_header(b, 1) + 32, 5); },  // "\0k\0k." cuts "k.kd"
       "NUL terminator"},
      {"name offset outside",
       [](Bytes& b) { put32(b, get64(b, section_header(b, 2) + 24) + 24, 999); },
       "outside its string table"},
      {"sections but no offset", [](Bytes& b) { put64(b, 40, 0); }, "e_shoff is 0"},
  };
  for (const Case& c : cases) {
    Bytes bad = good;
    c.damage(bad);
    const Expected<CodeObjectInfo> read = read_code_object(bad.data(), bad.size());
    EXPECT_FALSE(read) << c.what;
    const std::string error = read ? std::string() : read.failure().message;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.what << ": " << error;
  }
}

TEST(ElfReader, NoSectionsIsAnEmptyButValidImage) {
  Bytes image = make_elf({});
  put64(image, 40, 0);
  put16(image, 60, 0);
  put16(image, 62, 0);
  Expected<CodeObjectInfo> read = read_code_object(image.data(), image.size());
  ASSERT_TRUE(read) << read.failure().message;
  const CodeObjectInfo& info = read.value();
  EXPECT_TRUE(info.symbols.empty());
  EXPECT_EQ(info.machine, kElfMachineAmdgpu);
}

TEST(ElfReader, SurvivesRandomBytesAndBitFlips) {
  std::mt19937 random(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 300; ++round) {
    Bytes junk(static_cast<std::size_t>(byte(random)) * 8, 0);
    for (auto& b : junk) b = static_cast<std::uint8_t>(byte(random));
    if (junk.size() >= 7 && round % 2 == 0) {
      const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
      std::memcpy(junk.data(), ident, sizeof ident);
    }
    parses(junk);  // must return, and explain a failure
  }
  const Bytes& code = testing::sample_gfx90a().code;
  ASSERT_FALSE(code.empty());
  std::uniform_int_distribution<std::size_t> position(0, code.size() - 1);
  int rejected = 0;
  for (int round = 0; round < 1500; ++round) {
    Bytes damaged = code;
    for (int flips = 0; flips < 4; ++flips) {
      damaged[position(random)] ^= static_cast<std::uint8_t>(1 + byte(random) % 255);
    }
    // Aim some flips at the header and section table, where it matters most.
    damaged[40 + round % 24] ^= static_cast<std::uint8_t>(round % 3 == 0 ? 0x80 : 0);
    if (!parses(damaged)) ++rejected;
  }
  EXPECT_GT(rejected, 0);
}

TEST(ElfReader, MapsProcessorFlags) {
  EXPECT_EQ(amdgpu_processor_from_flags(0x3f), "gfx90a");
  EXPECT_EQ(amdgpu_processor_from_flags(0x53f), "gfx90a");  // with xnack/sramecc "any" bits
  EXPECT_EQ(amdgpu_processor_from_flags(0x36), "gfx1030");
  EXPECT_EQ(amdgpu_processor_from_flags(0x30), "gfx908");
  EXPECT_EQ(amdgpu_processor_from_flags(0x4c), "gfx942");
  EXPECT_EQ(amdgpu_processor_from_flags(0x41), "gfx1100");
  EXPECT_EQ(amdgpu_processor_from_flags(0x20), "gfx600");
  EXPECT_EQ(amdgpu_processor_from_flags(0x00), "");
  EXPECT_EQ(amdgpu_processor_from_flags(0x01), "");  // R600, never from hipRTC
  EXPECT_EQ(amdgpu_processor_from_flags(0x27), "");  // reserved
  EXPECT_EQ(amdgpu_processor_from_flags(0xff), "");
}

}  // namespace
}  // namespace hipacm::backend
