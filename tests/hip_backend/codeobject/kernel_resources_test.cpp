// SPDX-License-Identifier: MIT
// kernel_resources_test.cpp - the bounded MessagePack reader on hostile bytes, the AMDGPU metadata
// note and CUBIN .nv.info readers on hand-made images, and the waves-per-SIMD figures.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hip_backend/codeobject/elf_reader.h"
#include "hip_backend/codeobject/resources/amdgpu_occupancy.h"
#include "hip_backend/codeobject/resources/kernel_resources.h"
#include "hip_backend/codeobject/resources/msgpack_reader.h"
#include "tests/hip_backend/codeobject/msgpack_writer.h"
#include "tests/hip_backend/codeobject/synthetic_code_objects.h"

namespace hipacm::backend {
namespace {

using testing::append;
using testing::Bytes;
using testing::metadata_document;
using testing::mp_array;
using testing::mp_bool;
using testing::mp_map;
using testing::mp_str;
using testing::mp_uint;
using testing::Msgpack;
using testing::put16;
using testing::put32;
using testing::put64;

Expected<MsgpackValue> decode(const Msgpack& bytes, const MsgpackLimits& limits = {}) {
  return read_msgpack(bytes.data(), bytes.size(), limits);
}

std::string failure_of(const Msgpack& bytes, const MsgpackLimits& limits = {}) {
  auto read = decode(bytes, limits);
  return read ? std::string("(decoded)") : read.failure().message;
}

TEST(Msgpack, DecodesEveryScalarForm) {
  Msgpack bytes = {0xdd, 0, 0, 0, 11};  // array32, 11 items
  const Msgpack items[] = {
      {0x05},                          // fixint
      {0xcc, 0xfe},                    // uint8
      {0xcf, 0, 0, 0, 1, 0, 0, 0, 0},  // uint64 = 2^32
      {0xf0},                          // negative fixint -16
      {0xd1, 0xff, 0x85},              // int16 -123
      {0xd0, 0x05},                    // int8 holding a positive value
      {0xa3, 'a', 'b', 'c'},           // fixstr
      {0xc4, 0x02, 0x01, 0x02},        // bin8
      {0xc0},                          // nil
      {0xca, 0x3f, 0xc0, 0x00, 0x00},  // float32 1.5
      {0xd6, 0x07, 1, 2, 3, 4},        // fixext4 of type 7
  };
  for (const Msgpack& item : items) bytes.insert(bytes.end(), item.begin(), item.end());
  auto read = decode(bytes);
  ASSERT_TRUE(read) << read.failure().message;
  const auto& v = read->items;
  ASSERT_EQ(v.size(), 11u);
  EXPECT_EQ(v[0].as_unsigned(), 5u);
  EXPECT_EQ(v[1].as_unsigned(), 254u);
  EXPECT_EQ(v[2].as_unsigned(), std::uint64_t{1} << 32);
  EXPECT_EQ(v[3].kind, MsgpackValue::Kind::Signed);
  EXPECT_EQ(v[3].signed_value, -16);
  EXPECT_EQ(v[4].signed_value, -123);
  EXPECT_EQ(v[4].as_unsigned(), std::nullopt);
  EXPECT_EQ(v[5].as_unsigned(), 5u);  // MessagePack allows a signed encoding of 5
  EXPECT_EQ(v[6].as_string(), "abc");
  EXPECT_EQ(v[7].kind, MsgpackValue::Kind::Binary);
  EXPECT_EQ(v[7].bytes, std::string("\x01\x02", 2));
  EXPECT_EQ(v[7].as_string(), std::nullopt);
  EXPECT_EQ(v[8].kind, MsgpackValue::Kind::Nil);
  EXPECT_EQ(v[9].float_value, 1.5);
  EXPECT_EQ(v[10].kind, MsgpackValue::Kind::Extension);
  EXPECT_EQ(v[10].extension_type, 7);
}

TEST(Msgpack, EveryTruncationOfAValidDocumentFails) {
  const Msgpack doc = metadata_document(
      {mp_map({{".name", mp_str("k")}, {".vgpr_count", mp_uint(300)}, {".x", mp_bool(true)}})});
  ASSERT_TRUE(decode(doc));
  for (std::size_t n = 0; n < doc.size(); ++n) {
    const Msgpack prefix(doc.begin(), doc.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string why = failure_of(prefix);
    EXPECT_NE(why.find("msgpack: "), std::string::npos) << n << ": " << why;
  }
}

TEST(Msgpack, HugeLengthsAndCountsAreRefusedBeforeAnyAllocation) {
  EXPECT_NE(failure_of({0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}).find("a string of 4294967295 bytes"),
            std::string::npos);
  EXPECT_NE(failure_of({0xc6, 0xff, 0xff, 0xff, 0xf0}).find("a string of"), std::string::npos);
  EXPECT_NE(failure_of({0xdd, 0xff, 0xff, 0xff, 0xff, 0x00}).find("a count of 4294967295"),
            std::string::npos);
  EXPECT_NE(failure_of({0xdf, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00}).find("a count of"),
            std::string::npos);
  // A map needs two bytes an entry: one byte left cannot hold one entry.
  EXPECT_NE(failure_of({0x81, 0x00}).find("a count of 1"), std::string::npos);
  EXPECT_NE(failure_of({0xc9, 0xff, 0xff, 0xff, 0xff, 0x01}).find("an extension of"),
            std::string::npos);
  // Within what is left, but over the string limit.
  MsgpackLimits small;
  small.max_string = 4;
  EXPECT_NE(failure_of({0xa5, 'a', 'b', 'c', 'd', 'e'}, small).find("the limit is 4"),
            std::string::npos);
  small.max_bytes = 3;
  EXPECT_NE(failure_of({0xa2, 'a', 'b', 0xc0}, small).find("4 bytes (the limit is 3)"),
            std::string::npos);
}

TEST(Msgpack, NestingDeeperThanTheLimitFails) {
  Msgpack at_limit(32, 0x91);
  at_limit.push_back(0x00);
  EXPECT_TRUE(decode(at_limit)) << failure_of(at_limit);
  Msgpack deep(100000, 0x91);
  deep.push_back(0x00);
  EXPECT_NE(failure_of(deep).find("nested deeper than 32"), std::string::npos);
  Msgpack maps;
  for (int i = 0; i < 40; ++i) maps.insert(maps.end(), {0x81, 0xa1, 'k'});
  maps.push_back(0xc0);
  EXPECT_NE(failure_of(maps).find("nested deeper than 32"), std::string::npos);
}

TEST(Msgpack, TheValueCountIsBounded) {
  MsgpackLimits limits;
  limits.max_values = 10;
  Msgpack many = {0x9f};  // fixarray of 15
  many.insert(many.end(), 15, 0x00);
  EXPECT_NE(failure_of(many, limits).find("more than 10 values"), std::string::npos);
  Msgpack nine = {0x99};
  nine.insert(nine.end(), 9, 0x00);
  EXPECT_TRUE(decode(nine, limits));
}

TEST(Msgpack, UnusedTypeByteAndTrailingBytesFail) {
  EXPECT_NE(failure_of({0xc1}).find("unknown type byte 193"), std::string::npos);
  EXPECT_NE(failure_of({0x01, 0x02}).find("1 bytes after the value"), std::string::npos);
  EXPECT_NE(failure_of({}).find("truncated"), std::string::npos);
}

TEST(Msgpack, FindTakesTheFirstOfRepeatedKeysAndOnlyStringKeys) {
  const Msgpack doc = {0x83, 0x01, 0x07, 0xa1, 'k', 0x01, 0xa1, 'k', 0x02};
  auto read = decode(doc);
  ASSERT_TRUE(read);
  ASSERT_NE(read->find("k"), nullptr);
  EXPECT_EQ(read->find("k")->as_unsigned(), 1u);
  EXPECT_EQ(read->find("\x01"), nullptr);
  EXPECT_EQ(read->items.size(), 0u);
  EXPECT_EQ(MsgpackValue{}.find("k"), nullptr);
}

Msgpack full_kernel(const std::string& name) {
  return mp_map({{".name", mp_str(name)},
                 {".symbol", mp_str(name + ".kd")},
                 {".args", mp_array({mp_map({{".size", mp_uint(8)}, {".offset", mp_uint(0)}})})},
                 {".vgpr_count", mp_uint(40)},
                 {".sgpr_count", mp_uint(90)},
                 {".agpr_count", mp_uint(16)},
                 {".group_segment_fixed_size", mp_uint(4096)},
                 {".private_segment_fixed_size", mp_uint(272)},
                 {".kernarg_segment_size", mp_uint(280)},
                 {".wavefront_size", mp_uint(64)},
                 {".max_flat_workgroup_size", mp_uint(1024)},
                 {".sgpr_spill_count", mp_uint(3)},
                 {".vgpr_spill_count", mp_uint(70000)},
                 {".uses_dynamic_stack", mp_bool(false)},
                 {".some_future_key", mp_array({mp_str("skipped")})}});
}

TEST(AmdgpuMetadata, ReadsEveryResourceFieldOfEachKernel) {
  const Msgpack doc =
      metadata_document({full_kernel("first"), mp_map({{".name", mp_str("second")}})});
  auto read = amdgpu_metadata_from_msgpack(doc.data(), doc.size());
  ASSERT_TRUE(read) << read.failure().message;
  EXPECT_EQ(read->version_major, 1u);
  EXPECT_EQ(read->version_minor, 2u);
  EXPECT_EQ(read->target, "amdgcn-amd-amdhsa--gfx90a");
  ASSERT_EQ(read->kernels.size(), 2u);
  const AmdgpuKernelResources& k = read->kernels[0];
  EXPECT_EQ(k.name, "first");
  EXPECT_EQ(k.symbol, "first.kd");
  EXPECT_EQ(k.vgpr_count, 40u);
  EXPECT_EQ(k.sgpr_count, 90u);
  EXPECT_EQ(k.agpr_count, 16u);
  EXPECT_EQ(k.group_segment_fixed_size, 4096u);
  EXPECT_EQ(k.private_segment_fixed_size, 272u);
  EXPECT_EQ(k.kernarg_segment_size, 280u);
  EXPECT_EQ(k.wavefront_size, 64u);
  EXPECT_EQ(k.max_flat_workgroup_size, 1024u);
  EXPECT_EQ(k.sgpr_spill_count, 3u);
  EXPECT_EQ(k.vgpr_spill_count, 70000u);
  EXPECT_EQ(k.uses_dynamic_stack, false);
  EXPECT_EQ(read->kernels[1].name, "second");
  EXPECT_EQ(read->kernels[1].vgpr_count, std::nullopt);
}

TEST(AmdgpuMetadata, FieldsOfTheWrongTypeAreLeftOutAndOddEntriesSkipped) {
  const Msgpack doc = metadata_document({mp_str("not a map"), mp_uint(3),
                                         mp_map({{".name", mp_uint(5)},
                                                 {".vgpr_count", mp_str("40")},
                                                 {".sgpr_count", {0xff}},  // -1
                                                 {".uses_dynamic_stack", mp_uint(1)}})});
  auto read = amdgpu_metadata_from_msgpack(doc.data(), doc.size());
  ASSERT_TRUE(read) << read.failure().message;
  ASSERT_EQ(read->kernels.size(), 1u);
  EXPECT_EQ(read->kernels[0].name, "");
  EXPECT_EQ(read->kernels[0].vgpr_count, std::nullopt);
  EXPECT_EQ(read->kernels[0].sgpr_count, std::nullopt);
  EXPECT_EQ(read->kernels[0].uses_dynamic_stack, std::nullopt);
  const Msgpack kernels_not_array = mp_map({{"amdhsa.kernels", mp_str("x")}});
  auto none = amdgpu_metadata_from_msgpack(kernels_not_array.data(), kernels_not_array.size());
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->kernels.empty());
  const Msgpack not_a_map = mp_array({});
  auto refused = amdgpu_metadata_from_msgpack(not_a_map.data(), not_a_map.size());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.failure().message.find("not a map"), std::string::npos);
}

// An ELF64 image of the given sections (a null section and .shstrtab are added first); the
// symbols go into a .symtab when there are any.
struct TestSection {
  std::string name;
  std::uint32_t type = 1;  // PROGBITS
  Bytes data;
  std::uint32_t info = 0;
  std::uint64_t size_override = 0;  ///< a stored size other than data.size()
  std::uint64_t align = 4;
};

Bytes elf_with(std::uint16_t machine, std::vector<TestSection> sections,
               const std::vector<std::pair<std::string, std::uint8_t>>& functions = {}) {
  std::uint32_t symtab_link = 0;
  if (!functions.empty()) {
    TestSection strtab{".strtab", 3, {0}};
    Bytes symtab(24, 0);
    for (const auto& [name, other] : functions) {
      Bytes entry(24, 0);
      put32(entry, 0, static_cast<std::uint32_t>(strtab.data.size()));
      entry[4] = (1 << 4) | 2;  // GLOBAL FUNC
      entry[5] = other;
      append(symtab, entry);
      append(strtab.data, name);
      strtab.data.push_back(0);
    }
    sections.insert(sections.begin(), strtab);
    symtab_link = 2;  // [0] null, [1] .shstrtab, [2] .strtab
    sections.insert(sections.begin() + 1, TestSection{".symtab", 2, symtab});
  }
  std::string names(1, '\0');
  std::vector<std::uint32_t> name_at;
  sections.insert(sections.begin(), TestSection{".shstrtab", 3, {}});
  for (const TestSection& s : sections) {
    name_at.push_back(static_cast<std::uint32_t>(names.size()));
    names += s.name + '\0';
  }
  append(sections[0].data, names);
  Bytes image(64, 0);
  std::vector<std::uint64_t> offsets;
  for (const TestSection& s : sections) {
    while (image.size() % 8 != 0) image.push_back(0);
    offsets.push_back(image.size());
    append(image, s.data);
  }
  while (image.size() % 8 != 0) image.push_back(0);
  const std::size_t shoff = image.size();
  image.resize(shoff + (sections.size() + 1) * 64, 0);
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64, 2};
  std::memcpy(image.data(), ident, sizeof ident);
  put16(image, 16, 3);
  put16(image, 18, machine);
  put32(image, 20, 1);
  put64(image, 40, shoff);
  put32(image, 48, 0x3f);  // EF_AMDGPU_MACH gfx90a
  put16(image, 52, 64);
  put16(image, 58, 64);
  put16(image, 60, static_cast<std::uint16_t>(sections.size() + 1));
  put16(image, 62, 1);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const TestSection& s = sections[i];
    const std::size_t at = shoff + (i + 1) * 64;
    put32(image, at, name_at[i]);
    put32(image, at + 4, s.type);
    put64(image, at + 24, offsets[i]);
    put64(image, at + 32, s.size_override != 0 ? s.size_override : s.data.size());
    put32(image, at + 40, s.type == 2 ? symtab_link : 0);
    put32(image, at + 44, s.info);
    put64(image, at + 48, s.align);
    put64(image, at + 56, s.type == 2 ? 24 : 0);
  }
  return image;
}

Bytes note(const std::string& owner, std::uint32_t type, const Bytes& desc,
           std::uint32_t claimed_desc = 0) {
  Bytes out(12, 0);
  put32(out, 0, static_cast<std::uint32_t>(owner.size() + 1));
  put32(out, 4, claimed_desc != 0 ? claimed_desc : static_cast<std::uint32_t>(desc.size()));
  put32(out, 8, type);
  append(out, owner);
  out.push_back(0);
  while (out.size() % 4 != 0) out.push_back(0);
  append(out, desc);
  while (out.size() % 4 != 0) out.push_back(0);
  return out;
}

Expected<std::optional<AmdgpuMetadata>> metadata_of(const Bytes& image) {
  auto info = read_code_object(image.data(), image.size());
  if (!info) return std::move(info).failure();
  return read_amdgpu_metadata(image, info.value());
}

TEST(AmdgpuMetadataNote, IsFoundAfterOtherNotesOfTheSection) {
  const Msgpack doc = metadata_document({full_kernel("k")});
  Bytes notes = note("AMDGPU", 1, {1, 2, 3});  // another type of the same owner
  append(notes, note("GNU", 32, {9}));         // type 32 of another owner
  append(notes, note("AMDGPU", 32, doc));
  auto read = metadata_of(elf_with(224, {{".note", 7, notes}}));
  ASSERT_TRUE(read) << read.failure().message;
  ASSERT_TRUE(read->has_value());
  ASSERT_EQ(read.value()->kernels.size(), 1u);
  EXPECT_EQ(read.value()->kernels[0].vgpr_count, 40u);
}

TEST(AmdgpuMetadataNote, MissingNoteIsNoneAndBrokenNotesFailWithAReason) {
  auto none = metadata_of(elf_with(224, {{".note", 7, note("AMDGPU", 1, {1})}}));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  // A descriptor size larger than the section.
  auto lying = metadata_of(elf_with(224, {{".note", 7, note("AMDGPU", 32, {0x80}, 0xfffffff0)}}));
  ASSERT_FALSE(lying);
  EXPECT_NE(lying.failure().message.find("runs past the end of its section"), std::string::npos);
  // A note section whose stored size reaches past the image.
  auto outside = metadata_of(
      elf_with(224, {{".note", 7, note("AMDGPU", 32, {0x80}), 0, std::uint64_t{1} << 40}}));
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.failure().message.find("past the end of the image"), std::string::npos);
  // The right note holding bytes that are not MessagePack.
  auto garbage = metadata_of(elf_with(224, {{".note", 7, note("AMDGPU", 32, {0xc1})}}));
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.failure().message.find("unknown type byte"), std::string::npos);
}

Bytes sized_record(std::uint8_t attribute, const std::vector<std::uint32_t>& words) {
  Bytes out = {4, attribute, static_cast<std::uint8_t>(words.size() * 4), 0};
  for (std::uint32_t w : words) {
    Bytes word(4, 0);
    put32(word, 0, w);
    append(out, word);
  }
  return out;
}

TEST(NvInfo, SplitsRecordsOfEachFormatAndRefusesBrokenOnes) {
  Bytes section = {1, 0x35, 0, 0, 3, 0x19, 0x1c, 0x00, 2, 0x4c, 1, 0};
  append(section, sized_record(0x05, {128, 1, 1}));
  auto records = read_nv_info(section.data(), section.size());
  ASSERT_TRUE(records) << records.failure().message;
  ASSERT_EQ(records->size(), 4u);
  EXPECT_EQ(records.value()[1].attribute, 0x19);
  EXPECT_EQ(records.value()[1].value, (Bytes{0x1c, 0}));
  EXPECT_EQ(records.value()[3].value.size(), 12u);
  Bytes truncated = {4, 0x2f, 0xff, 0xff, 1, 2, 3};
  auto bad = read_nv_info(truncated.data(), truncated.size());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.failure().message.find("claims 65535 bytes past the end"), std::string::npos);
  Bytes short_header = {3, 0x19, 0x1c};
  EXPECT_FALSE(read_nv_info(short_header.data(), short_header.size()));
  Bytes unknown_format = {9, 0x19, 0, 0};
  auto unknown = read_nv_info(unknown_format.data(), unknown_format.size());
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.failure().message.find("EIATTR record at byte 0 has the unknown format 9"),
            std::string::npos);
}

// A CUBIN of two kernels as ptxas lays it out: registers in .text.<k>'s sh_info, module-wide
// records keyed by symbol index, per-kernel records, shared memory as a NOBITS section.
Bytes two_kernel_cubin(Bytes module_info) {
  Bytes tile_info = {3, 0x19, 0x10, 0x00, 3, 0x1b, 0xff, 0x00};
  append(tile_info, sized_record(0x05, {128, 2, 1}));
  return elf_with(190,
                  {{".nv.info", 0x70000000, module_info},
                   {".nv.info.tile", 0x70000000, tile_info},
                   {".nv.info.other", 0x70000000, {1, 2}},  // not an entry: never read
                   {".text.tile", 1, Bytes(16, 0), (32u << 24) | 1},
                   {".text.saxpy", 1, Bytes(16, 0), (10u << 24) | 2},
                   {".nv.constant0.saxpy", 1, Bytes(380, 0)},
                   {".nv.shared.tile", 8, {}, 0, 1024},
                   {".nv.local.tile", 8, {}, 0, 64}},
                  {{"tile", 0x10}, {"saxpy", 0x10}, {"helper", 0}});
}

TEST(CudaResources, ReadsRegistersMemoryAndAttributesOfEveryEntry) {
  Bytes module_info = sized_record(0x2f, {2, 10});
  append(module_info, sized_record(0x11, {1, 256}));
  append(module_info, sized_record(0x12, {1, 256}));
  append(module_info, sized_record(0x11, {2, 0}));
  append(module_info, sized_record(0x11, {77, 999}));  // no such kernel: ignored
  const Bytes image = two_kernel_cubin(module_info);
  auto info = read_code_object(image.data(), image.size());
  ASSERT_TRUE(info) << info.failure().message;
  std::string problem;
  const auto kernels = read_cuda_kernel_resources(image, info.value(), &problem);
  EXPECT_EQ(problem, "");
  ASSERT_EQ(kernels.size(), 2u);
  const CudaKernelResources& saxpy = kernels[0];
  const CudaKernelResources& tile = kernels[1];
  EXPECT_EQ(saxpy.name, "saxpy");
  EXPECT_EQ(saxpy.registers, 10u);
  EXPECT_EQ(saxpy.shared_bytes, 0u);
  EXPECT_EQ(saxpy.constant0_bytes, 380u);
  EXPECT_EQ(saxpy.stack_frame_bytes, 0u);
  EXPECT_EQ(saxpy.max_threads, std::nullopt);
  EXPECT_EQ(tile.name, "tile");
  EXPECT_EQ(tile.registers, 32u);
  EXPECT_EQ(tile.shared_bytes, 1024u);
  EXPECT_EQ(tile.local_bytes, 64u);
  EXPECT_EQ(tile.stack_frame_bytes, 256u);
  EXPECT_EQ(tile.min_stack_bytes, 256u);
  EXPECT_EQ(tile.param_bytes, 16u);
  EXPECT_EQ(tile.max_registers, 255u);
  EXPECT_EQ(tile.max_threads, 256u);
}

TEST(CudaResources, ABrokenInfoSectionIsNotedAndTheRestStillRead) {
  const Bytes image = two_kernel_cubin({4, 0x2f, 0x40, 0x00});
  auto info = read_code_object(image.data(), image.size());
  ASSERT_TRUE(info);
  std::string problem;
  const auto kernels = read_cuda_kernel_resources(image, info.value(), &problem);
  EXPECT_NE(problem.find(".nv.info: EIATTR record at byte 0 claims 64 bytes"), std::string::npos)
      << problem;
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[1].registers, 32u);
  EXPECT_EQ(kernels[1].max_threads, 256u);
}

TEST(AmdgpuOccupancy, RegisterFilesOfEachFamily) {
  auto file = [](const char* processor, unsigned wave) {
    const auto f = amdgpu_register_file(processor, wave);
    return f ? std::to_string(f->max_waves_per_simd) + "/" + std::to_string(f->vgprs_per_lane) +
                   "/" + std::to_string(f->vgpr_granule) + (f->sgprs_limit ? "/sgpr" : "")
             : std::string("none");
  };
  EXPECT_EQ(file("gfx900", 64), "10/256/4/sgpr");
  EXPECT_EQ(file("gfx908", 64), "10/256/4/sgpr");
  EXPECT_EQ(file("gfx90a", 64), "8/512/8/sgpr");
  EXPECT_EQ(file("gfx90a:sramecc+:xnack-", 64), "8/512/8/sgpr");
  EXPECT_EQ(file("gfx942", 64), "8/512/8/sgpr");
  EXPECT_EQ(file("gfx1010", 32), "20/1024/8");
  EXPECT_EQ(file("gfx1010", 64), "20/512/4");
  EXPECT_EQ(file("gfx1030", 32), "16/1024/16");
  EXPECT_EQ(file("gfx1030", 64), "16/512/8");
  EXPECT_EQ(file("gfx1100", 32), "16/1536/24");
  EXPECT_EQ(file("gfx1102", 32), "16/1024/16");
  EXPECT_EQ(file("gfx1201", 64), "16/768/12");
  EXPECT_EQ(file("gfx900", 32), "none");
  EXPECT_EQ(file("gfx11-generic", 32), "none");
  EXPECT_EQ(file("gfx1", 32), "none");
  EXPECT_EQ(file("sm_80", 32), "none");
}

TEST(AmdgpuOccupancy, WavesPerSimdFromVgprsAndSgprs) {
  auto waves = [](const char* processor, unsigned wave, std::uint64_t vgprs, std::uint64_t sgprs) {
    const WaveLimits l = amdgpu_wave_limits(*amdgpu_register_file(processor, wave), vgprs, sgprs);
    return std::to_string(l.waves) + " (" + std::to_string(l.by_vgprs) + ", " +
           (l.by_sgprs ? std::to_string(*l.by_sgprs) : "-") + ")";
  };
  // LLVM's agpr-register-count.ll: 40 VGPRs give gfx908 6 waves; 56 give gfx90a its 8.
  EXPECT_EQ(waves("gfx908", 64, 40, 10), "6 (6, 10)");
  EXPECT_EQ(waves("gfx90a", 64, 56, 10), "8 (8, 8)");  // no limit above the 8 slots
  EXPECT_EQ(waves("gfx90a", 64, 128, 10), "4 (4, 8)");
  EXPECT_EQ(waves("gfx90a", 64, 0, 0), "8 (8, 8)");
  EXPECT_EQ(waves("gfx900", 64, 20, 88), "9 (10, 9)");
  EXPECT_EQ(waves("gfx900", 64, 20, 101), "7 (10, 7)");
  EXPECT_EQ(waves("gfx803", 64, 20, 96), "8 (10, 8)");
  EXPECT_EQ(waves("gfx701", 64, 20, 60), "8 (10, 8)");
  EXPECT_EQ(waves("gfx701", 64, 20, 200), "5 (10, 5)");
  EXPECT_EQ(waves("gfx1030", 32, 64, 100), "16 (16, -)");
  EXPECT_EQ(waves("gfx1030", 32, 65, 100), "12 (12, -)");
  EXPECT_EQ(waves("gfx1100", 32, 100, 100), "12 (12, -)");
  EXPECT_EQ(waves("gfx1030", 64, 256, 100), "2 (2, -)");
  EXPECT_EQ(waves("gfx90a", 64, 1u << 30, 10), "1 (1, 8)");
}

}  // namespace
}  // namespace hipacm::backend
