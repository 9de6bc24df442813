// SPDX-License-Identifier: MIT
// spirv_code_object_test.cpp - the amdgcnspirv check on synthetic SPIR-V modules and offload
// bundles: what it accepts, the kernels it confirms, and damaged or hostile bytes.
#include "hip_backend/codeobject/spirv_code_object.h"

#include <gtest/gtest.h>

#include <random>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/offload_bundle.h"
#include "tests/hip_backend/codeobject/synthetic_code_objects.h"

namespace hipacm::backend {
namespace {

using testing::Bytes;
using testing::kernel_module;
using testing::make_offload_bundle;
using testing::SpirvBuilder;

constexpr const char* kSpirvId = "hip-spirv64-amd-amdhsa--amdgcnspirv";
constexpr const char* kHostId = "host-x86_64-unknown-linux-gnu-";

SpirvModule read_ok(const Bytes& bytes) {
  Expected<SpirvModule> module = read_spirv_module(bytes.data(), bytes.size());
  EXPECT_TRUE(module) << module.failure().message;
  return module ? std::move(module).value() : SpirvModule{};
}

std::string read_error(const Bytes& bytes) {
  const Expected<SpirvModule> module = read_spirv_module(bytes.data(), bytes.size());
  EXPECT_FALSE(module);
  // A refused module hands out no kernels.
  EXPECT_TRUE(!module || module->kernels.empty());
  return module ? std::string() : module.failure().message;
}

std::string check_error(const Bytes& code, const std::vector<std::string>& expected = {}) {
  const Expected<void> checked = check_code_object(code, "amdgcnspirv", expected);
  EXPECT_FALSE(checked);
  const std::string error = checked.failure().message;
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(SpirvModule, ReadsKernelsExportsAndTheMemoryModel) {
  const SpirvModule module =
      read_ok(kernel_module({"vadd", "_Z5scaleIfEvPT_S0_"}, "table").bytes());
  EXPECT_EQ(module.version_major, 1u);
  EXPECT_EQ(module.version_minor, 4u);
  EXPECT_FALSE(module.big_endian);
  EXPECT_EQ(module.addressing_model, 2u);
  EXPECT_EQ(module.memory_model, 2u);
  EXPECT_EQ(module.kernels, (std::vector<std::string>{"_Z5scaleIfEvPT_S0_", "vadd"}));
  EXPECT_EQ(module.exported, std::vector<std::string>{"table"});
  // The same module written big-endian.
  const SpirvModule swapped = read_ok(kernel_module({"vadd"}).bytes(/*big_endian=*/true));
  EXPECT_TRUE(swapped.big_endian);
  EXPECT_EQ(swapped.kernels, std::vector<std::string>{"vadd"});
}

TEST(SpirvModule, OnlyKernelEntryPointsAreKernelsAndImportsAreNotExports) {
  SpirvBuilder spirv;
  spirv.op(14, {2, 2});
  std::vector<std::uint32_t> gl = {4, 7};  // GLCompute: not a kernel
  for (const std::uint32_t w : SpirvBuilder::literal("compute_main")) gl.push_back(w);
  spirv.op(15, gl);
  std::vector<std::uint32_t> imported = {8, 41};
  for (const std::uint32_t w : SpirvBuilder::literal("extern_fn")) imported.push_back(w);
  imported.push_back(1);  // Import
  spirv.op(71, imported);
  const SpirvModule module = read_ok(spirv.bytes());
  EXPECT_TRUE(module.kernels.empty());
  EXPECT_TRUE(module.exported.empty());
}

TEST(SpirvModule, RefusesBadHeaders) {
  const Bytes good = kernel_module({"k"}).bytes();
  EXPECT_NE(read_error({}).find("truncated"), std::string::npos);
  EXPECT_NE(read_error(Bytes(good.begin(), good.begin() + 16)).find("truncated"),
            std::string::npos);
  EXPECT_NE(read_error(Bytes(good.begin(), good.end() - 1)).find("whole number of 4-byte words"),
            std::string::npos);
  Bytes bad = good;
  bad[0] = 0x04;
  EXPECT_NE(read_error(bad).find("bad magic"), std::string::npos);
  SpirvBuilder v2(0x00020000);
  v2.op(14, {2, 2});
  EXPECT_NE(read_error(v2.bytes()).find("unknown version word 0x00020000"), std::string::npos);
  SpirvBuilder v17(0x00010700);
  v17.op(14, {2, 2});
  EXPECT_NE(read_error(v17.bytes()).find("unknown version"), std::string::npos);
  SpirvBuilder unbound(0x00010000, 0);
  unbound.op(14, {2, 2});
  EXPECT_NE(read_error(unbound.bytes()).find("id bound is 0"), std::string::npos);
  SpirvBuilder schema;
  schema.words()[4] = 1;
  schema.op(14, {2, 2});
  EXPECT_NE(read_error(schema.bytes()).find("schema word"), std::string::npos);
}

TEST(SpirvModule, TrustsNoWordCountOrString) {
  SpirvBuilder zero;
  zero.op(14, {2, 2});
  zero.words().push_back(0x00000011);  // word count 0
  EXPECT_NE(read_error(zero.bytes()).find("word count 0"), std::string::npos);
  SpirvBuilder past;
  past.op(14, {2, 2});
  past.words().push_back((9u << 16) | 17);  // claims 9 words, 1 is there
  EXPECT_NE(read_error(past.bytes()).find("runs past the end"), std::string::npos);
  SpirvBuilder unterminated;
  unterminated.op(14, {2, 2}).op(15, {6, 3, 0x61616161});  // "aaaa" with no NUL
  EXPECT_NE(read_error(unterminated.bytes()).find("without a NUL"), std::string::npos);
  SpirvBuilder short_entry;
  short_entry.op(14, {2, 2}).op(15, {6, 3});
  EXPECT_NE(read_error(short_entry.bytes()).find("shorter than 4 words"), std::string::npos);
  SpirvBuilder past_bound(0x00010000, 3);
  std::vector<std::uint32_t> entry = {6, 3};
  for (const std::uint32_t w : SpirvBuilder::literal("k")) entry.push_back(w);
  past_bound.op(14, {2, 2}).op(15, entry);
  EXPECT_NE(read_error(past_bound.bytes()).find("past the bound"), std::string::npos);
  SpirvBuilder linkage;
  linkage.op(14, {2, 2}).op(71, {4, 41, 0x00006b6b});  // "kk\0" then no linkage type
  EXPECT_NE(read_error(linkage.bytes()).find("linkage type"), std::string::npos);
  SpirvBuilder none;
  EXPECT_NE(read_error(none.bytes()).find("0 OpMemoryModel"), std::string::npos);
  SpirvBuilder two;
  two.op(14, {2, 2}).op(14, {2, 2});
  EXPECT_NE(read_error(two.bytes()).find("2 OpMemoryModel"), std::string::npos);
  SpirvBuilder long_model;
  long_model.op(14, {2, 2, 0});
  EXPECT_NE(read_error(long_model.bytes()).find("not 3 words"), std::string::npos);
}

TEST(SpirvModule, RefusesEveryTruncation) {
  const Bytes good = kernel_module({"vadd", "other"}).bytes();
  for (std::size_t n = 0; n < good.size(); ++n) {
    // A cut at an instruction boundary can still be a whole module, as long as the memory model
    // is in: only cuts inside the header or an instruction must fail.
    if (const Expected<SpirvModule> module = read_spirv_module(good.data(), n)) {
      EXPECT_EQ(n % 4, 0u);
      EXPECT_GE(n, 64u);  // the header, four capabilities and the memory model
    } else {
      EXPECT_FALSE(module.failure().message.empty()) << n;
    }
  }
}

TEST(SpirvCodeObject, TheCheckConfirmsKernelsAndExportedNames) {
  const Bytes code = kernel_module({"vadd", "_Z5scaleIfEvPT_S0_"}, "table").bytes();
  const Expected<void> bare = check_code_object(code, "amdgcnspirv", {});
  EXPECT_TRUE(bare) << bare.failure().message;
  const Expected<void> named =
      check_code_object(code, "amdgcnspirv", {"vadd", "_Z5scaleIfEvPT_S0_", "table"});
  EXPECT_TRUE(named) << named.failure().message;
  const std::string missing = check_error(code, {"vadd", "ghost", "ghost"});
  EXPECT_NE(missing.find("lacks entry point(s) ghost;"), std::string::npos) << missing;
  EXPECT_NE(missing.find("kernels present: _Z5scaleIfEvPT_S0_, vadd"), std::string::npos);
  EXPECT_EQ(code_object_kernels(code, "amdgcnspirv"),
            (std::vector<std::string>{"_Z5scaleIfEvPT_S0_", "vadd"}));
  EXPECT_TRUE(code_object_kernels({1, 2, 3}, "amdgcnspirv").empty());
}

TEST(SpirvCodeObject, AnAmdgpuElfIsNoAnswerForSpirvAndSpirvNoneForAProcessor) {
  const Bytes elf = testing::make_amdgpu_elf(6, 0x1000054);
  EXPECT_NE(check_error(elf).find("not SPIR-V for amdgcnspirv: invalid SPIR-V: bad magic"),
            std::string::npos);
  const Expected<void> checked = check_code_object(kernel_module({"k"}).bytes(), "gfx90a", {"k"});
  EXPECT_FALSE(checked);
  const std::string& error = checked.failure().message;
  EXPECT_NE(error.find("invalid ELF"), std::string::npos) << error;
  EXPECT_FALSE(is_spirv_arch("amdgcnspirv:xnack+"));
  EXPECT_FALSE(is_spirv_arch("gfx90a"));
  EXPECT_TRUE(is_spirv_arch("amdgcnspirv"));
}

TEST(SpirvCodeObject, ReadsTheSpirvEntryOfAnOffloadBundle) {
  const Bytes module = kernel_module({"vadd"}).bytes();
  for (const char* id : {kSpirvId, "hip-spirv64-amd-amdhsa-unknown-amdgcnspirv"}) {
    const Bytes bundle = make_offload_bundle({{kHostId, {}}, {id, module}});
    const Expected<SpirvCodeObject> read = read_spirv_code_object(bundle);
    ASSERT_TRUE(read) << read.failure().message;
    const SpirvCodeObject& object = read.value();
    EXPECT_TRUE(object.bundled);
    EXPECT_EQ(object.bundle_entry, id);
    EXPECT_EQ(object.module.kernels, std::vector<std::string>{"vadd"});
    const Expected<void> checked = check_code_object(bundle, "amdgcnspirv", {"vadd"});
    EXPECT_TRUE(checked) << checked.failure().message;
  }
}

TEST(SpirvCodeObject, RefusesBundlesWithoutOneGoodSpirvEntry) {
  const Bytes module = kernel_module({"vadd"}).bytes();
  const Bytes elf = testing::make_amdgpu_elf(5, 0x53f);
  EXPECT_NE(
      check_error(make_offload_bundle({{kHostId, {}}, {"hip-amdgcn-amd-amdhsa--gfx90a", elf}}))
          .find("no amdgcnspirv entry; entries: host-x86_64-unknown-linux-gnu-, "
                "hip-amdgcn-amd-amdhsa--gfx90a"),
      std::string::npos);
  EXPECT_NE(check_error(make_offload_bundle({{kSpirvId, module}, {kSpirvId, module}}))
                .find("two SPIR-V entries"),
            std::string::npos);
  Bytes damaged_module = module;
  damaged_module[0] = 0;
  EXPECT_NE(check_error(make_offload_bundle({{kSpirvId, damaged_module}}))
                .find("entry hip-spirv64-amd-amdhsa--amdgcnspirv: invalid SPIR-V: bad magic"),
            std::string::npos);
  Bytes compressed = {'C', 'C', 'O', 'B', 1, 0, 1, 0};
  EXPECT_NE(check_error(compressed).find("compressed (CCOB) bundles are not unpacked"),
            std::string::npos);
}

TEST(OffloadBundle, TrustsNoCountLengthOrOffset) {
  const Bytes good = make_offload_bundle({{kHostId, {}}, {kSpirvId, kernel_module({"k"}).bytes()}});
  const Expected<std::vector<OffloadBundleEntry>> read =
      read_offload_bundle(good.data(), good.size());
  ASSERT_TRUE(read) << read.failure().message;
  const std::vector<OffloadBundleEntry>& entries = read.value();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].id, kSpirvId);
  const std::size_t count_at = 24, first_entry = 32;
  const auto damaged = [&](std::size_t at, std::uint64_t value) {
    Bytes bad = good;
    testing::put64(bad, at, value);
    const Expected<std::vector<OffloadBundleEntry>> refused =
        read_offload_bundle(bad.data(), bad.size());
    EXPECT_FALSE(refused) << at;
    // A refused bundle hands out no entries.
    EXPECT_TRUE(!refused || refused->empty());
    return refused ? std::string() : refused.failure().message;
  };
  EXPECT_NE(damaged(count_at, 0).find("no entries"), std::string::npos);
  EXPECT_NE(damaged(count_at, ~std::uint64_t{0}).find("cannot fit"), std::string::npos);
  EXPECT_FALSE(damaged(count_at, 3).empty());  // a third entry read from the payload
  EXPECT_NE(damaged(first_entry, good.size() + 1).find("leaves the"), std::string::npos);
  EXPECT_NE(damaged(first_entry + 8, ~std::uint64_t{0} - 4).find("leaves the"), std::string::npos);
  EXPECT_NE(damaged(first_entry + 16, 5000).find("over 1024"), std::string::npos);
  EXPECT_NE(damaged(first_entry + 16, 0).find("empty or non-printable id"), std::string::npos);
  Bytes control = good;
  control[first_entry + 24] = '\n';
  const Expected<std::vector<OffloadBundleEntry>> controlled =
      read_offload_bundle(control.data(), control.size());
  EXPECT_FALSE(controlled);
  const std::string error = controlled ? std::string() : controlled.failure().message;
  EXPECT_NE(error.find("non-printable"), std::string::npos) << error;
  for (std::size_t n = 0; n < first_entry + 24; ++n) {
    EXPECT_FALSE(read_offload_bundle(good.data(), n)) << n;
  }
}

TEST(SpirvCodeObject, SurvivesRandomBitFlips) {
  const Bytes module = kernel_module({"vadd", "scale"}, "table").bytes();
  const Bytes bundle = make_offload_bundle({{kHostId, {}}, {kSpirvId, module}});
  std::mt19937 random(2024);
  int refused = 0;
  for (const Bytes* base : {&module, &bundle}) {
    std::uniform_int_distribution<std::size_t> position(0, base->size() - 1);
    for (int round = 0; round < 2000; ++round) {
      Bytes damaged = *base;
      for (int flips = 0; flips < 3; ++flips)
        damaged[position(random)] ^= static_cast<std::uint8_t>(1u << (round % 8));
      const Expected<void> usable = check_code_object(damaged, "amdgcnspirv", {});
      if (!usable) {
        EXPECT_FALSE(usable.failure().message.empty());
        ++refused;
      } else {
        const Expected<void> kernels =
            check_code_object(damaged, "amdgcnspirv", code_object_kernels(damaged, "amdgcnspirv"));
        EXPECT_TRUE(kernels) << kernels.failure().message;
      }
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace hipacm::backend
