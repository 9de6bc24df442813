// SPDX-License-Identifier: MIT
// library_facts_test.cpp - remembered library facts: recalled only while the library file provably
// is the same, and comgr's table survives the trip through the memo.
#include "hip_backend/library_facts.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "hip_backend/hiprtc/comgr_isa_internal.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/nvrtc/nvrtc_facts.h"
#include "support/libraries/dynamic_library.h"
#include "tests/hip_backend/rocm_facts.h"

namespace hipacm::backend {
namespace {

namespace fs = std::filesystem;

class MapMemo final : public LibraryFactMemo {
 public:
  std::optional<std::string> recall(const std::string& key) noexcept override {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  void remember(const std::string& key, const std::string& value) noexcept override {
    values[key] = value;
  }
  std::map<std::string, std::string> values;
};

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class LibraryFacts : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hipacm-facts-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    library_ = dir_ / "libexample.so.1";
    write_file(library_, "not loaded by this test: only its identity matters");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> candidates() const { return {library_.string()}; }
  void remember(const std::string& payload) {
    remember_library_fact(&memo_, "fact", candidates(), library_.string(), payload);
  }
  std::optional<std::string> recall() { return recall_library_fact(&memo_, "fact", candidates()); }

  fs::path dir_;
  fs::path library_;
  MapMemo memo_;
};

TEST_F(LibraryFacts, RecallsWhatWasRememberedForTheSameFile) {
  remember("payload\nwith two lines\n");
  EXPECT_EQ(recall(), "payload\nwith two lines\n");
  EXPECT_EQ(memo_.values.size(), 1u);
}

TEST_F(LibraryFacts, NothingWithoutAMemoOrCandidates) {
  remember("payload");
  EXPECT_FALSE(recall_library_fact(nullptr, "fact", candidates()));
  EXPECT_FALSE(recall_library_fact(&memo_, "fact", {}));
  remember_library_fact(nullptr, "fact", candidates(), library_.string(), "other");
  EXPECT_EQ(recall(), "payload");
}

TEST_F(LibraryFacts, AnotherFactOrCandidateListMisses) {
  remember("payload");
  EXPECT_FALSE(recall_library_fact(&memo_, "other fact", candidates()));
  EXPECT_FALSE(recall_library_fact(&memo_, "fact", {library_.string(), "libother.so"}));
  EXPECT_TRUE(recall());
}

TEST_F(LibraryFacts, AChangedModificationTimeMisses) {
  remember("payload");
  const auto later = fs::last_write_time(library_) + std::chrono::seconds(5);
  fs::last_write_time(library_, later);
  EXPECT_FALSE(recall());
}

TEST_F(LibraryFacts, ARewrittenFileMisses) {
  remember("payload");
  const auto mtime = fs::last_write_time(library_);
  write_file(library_, "a different library of a different size");
  fs::last_write_time(library_, mtime);  // same time stamp: the size still differs
  EXPECT_FALSE(recall());
}

TEST_F(LibraryFacts, AReplacedFileWithTheSameSizeAndTimeMisses) {
  remember("payload");
  const auto mtime = fs::last_write_time(library_);
  const auto size = fs::file_size(library_);
  fs::remove(library_);
  const fs::path spare = dir_ / "spare";  // keeps the old inode number from being reused at once
  write_file(spare, "x");
  write_file(library_, std::string(size, 'y'));
  fs::last_write_time(library_, mtime);
  EXPECT_FALSE(recall());
}

TEST_F(LibraryFacts, ADeletedFileMisses) {
  remember("payload");
  fs::remove(library_);
  EXPECT_FALSE(recall());
}

TEST_F(LibraryFacts, ARepointedLinkMissesWhileTheOldFileRemains) {
  const fs::path first = dir_ / "libexample.so.1.0";
  const fs::path second = dir_ / "libexample.so.1.1";
  fs::rename(library_, first);
  write_file(second, "a second library");
  fs::create_symlink(first.filename(), library_);
  remember("payload");
  EXPECT_EQ(recall(), "payload");
  fs::remove(library_);
  fs::create_symlink(second.filename(), library_);
  EXPECT_FALSE(recall());
}

TEST_F(LibraryFacts, AFileThatCannotBeIdentifiedIsNotRemembered) {
  remember_library_fact(&memo_, "fact", candidates(), (dir_ / "missing.so").string(), "payload");
  EXPECT_TRUE(memo_.values.empty());
}

TEST_F(LibraryFacts, ADamagedRecordMisses) {
  remember("payload");
  ASSERT_EQ(memo_.values.size(), 1u);
  std::string& value = memo_.values.begin()->second;
  for (const std::string& damaged : {std::string(), std::string("one line only"),
                                     value.substr(0, value.find('\n') + 1) + "x\ny\npayload"}) {
    value = damaged;
    EXPECT_FALSE(recall()) << damaged;
  }
}

TEST_F(LibraryFacts, ALibraryAlreadyLoadedHereIsNeverRecalled) {
  // dlopen would hand back the loaded copy, whatever the memo says.
  auto libc = DynamicLibrary::open("libc.so.6");
  ASSERT_TRUE(libc);
  remember_library_fact(&memo_, "fact", {"libc.so.6"}, libc->path(), "payload");
  EXPECT_EQ(memo_.values.size(), 1u);
  EXPECT_FALSE(recall_library_fact(&memo_, "fact", {"libc.so.6"}));
}

TEST(ComgrIsaPayload, RoundTripsTheRealTable) {
  const auto table = load_amdgpu_isa_table_from(comgr_library_candidates());
  ASSERT_TRUE(table) << table.failure().message;
  const auto parsed = parse_amdgpu_isa_table_payload(amdgpu_isa_table_payload(table.value()));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->library_path, table->library_path);
  EXPECT_EQ(parsed->features_known, table->features_known);
  EXPECT_EQ(parsed->processors, table->processors);
  ASSERT_EQ(parsed->details.size(), table->details.size());
  for (std::size_t i = 0; i < table->details.size(); ++i) {
    EXPECT_EQ(parsed->details[i].xnack, table->details[i].xnack) << table->details[i].name;
    EXPECT_EQ(parsed->details[i].sramecc, table->details[i].sramecc) << table->details[i].name;
  }
  std::string why;
  Expected<void> checked;
  checked = validate_amdgpu_arch_with(*parsed, "gfx90a:xnack-");
  why = checked.failure().message;
  EXPECT_TRUE(checked) << why;
  checked = validate_amdgpu_arch_with(*parsed, rocm_facts::unknown_processor());
  why = checked.failure().message;
  EXPECT_FALSE(checked);
}

TEST(ComgrIsaPayload, RejectsMalformedText) {
  const std::string good = "/lib/libamd_comgr.so.2\nfeatures_known 1\ngfx90a 1 1\ngfx1030 0 0\n";
  ASSERT_TRUE(parse_amdgpu_isa_table_payload(good));
  for (const char* bad :
       {"", "/lib/libamd_comgr.so.2\n", "/lib/libamd_comgr.so.2\nfeatures_known 2\ngfx90a 1 1\n",
        "/lib/libamd_comgr.so.2\nfeatures 1\ngfx90a 1 1\n",
        "/lib/libamd_comgr.so.2\nfeatures_known 1\n",
        "/lib/libamd_comgr.so.2\nfeatures_known 1\nsm_90 0 0\n",
        "/lib/libamd_comgr.so.2\nfeatures_known 1\ngfx90a yes no\n",
        "/lib/libamd_comgr.so.2\nfeatures_known 1\ngfx90a 1\n"}) {
    EXPECT_FALSE(parse_amdgpu_isa_table_payload(bad)) << bad;
  }
}

TEST(NvrtcFactsPayload, RoundTripsAndRejectsMalformedText) {
  NvrtcFacts facts;
  facts.identity = "nvrtc 13.0 (/usr/local/cuda/lib64/libnvrtc.so.13)";
  facts.archs = {75, 80, 90, 100};
  const auto parsed = decode_nvrtc_facts(encode_nvrtc_facts(facts));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->identity, facts.identity);
  EXPECT_EQ(parsed->archs, facts.archs);
  // Built by appending: GCC 12 warns falsely (-Wrestrict, PR 105329) on "literal" + string.
  std::string long_identity = "75\nnvrtc ";
  long_identity.append(5000, 'x');
  for (const std::string& bad : std::vector<std::string>{
           "", "75,80", "\nnvrtc 13.0 (x)", "75,,80\nnvrtc 13.0 (x)", "75,80,\nnvrtc 13.0 (x)",
           ",75\nnvrtc 13.0 (x)", "75,-80\nnvrtc 13.0 (x)", "75,0\nnvrtc 13.0 (x)",
           "75,8x\nnvrtc 13.0 (x)", "75,99999999999\nnvrtc 13.0 (x)", "75\nhiprtc 6.4 (x)",
           "75\nnvrtc 13.0 (x)\nmore", long_identity}) {
    EXPECT_FALSE(decode_nvrtc_facts(bad)) << bad;
  }
  std::string many;
  for (int i = 1; i <= 5000; ++i) {
    if (i > 1) many += ',';
    many += std::to_string(i);
  }
  many += "\nnvrtc 13.0 (x)";
  EXPECT_FALSE(decode_nvrtc_facts(many)) << "more archs than any NVRTC has";
}

// Read once from NVRTC and remembered, the facts come back from the memo without NVRTC (the
// recall itself is checked against the library file in LibraryFacts.* above).
TEST(NvrtcFactsPayload, AreRememberedFromTheLoadedNvrtc) {
  MapMemo memo;
  const auto read = nvrtc_facts(&memo);
  if (!read) GTEST_SKIP() << "no NVRTC: " << read.failure().message;
  EXPECT_FALSE(read->from_memo);
  EXPECT_EQ(read->identity, nvrtc_version_string());
  EXPECT_FALSE(read->archs.empty());
  ASSERT_EQ(memo.values.size(), 1u) << "one record for the NVRTC that was read";
  // NVRTC is loaded in this process now, so recall declines (dlopen would return the loaded
  // copy, and reading it is cheap); the stored payload itself is what a later process decodes.
  const std::string& record = memo.values.begin()->second;
  const auto payload_at = record.rfind(encode_nvrtc_facts(read.value()));
  ASSERT_NE(payload_at, std::string::npos);
  EXPECT_EQ(payload_at + encode_nvrtc_facts(read.value()).size(), record.size());
}

}  // namespace
}  // namespace hipacm::backend
