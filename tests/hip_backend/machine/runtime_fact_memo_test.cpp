// SPDX-License-Identifier: MIT
// runtime_fact_memo_test.cpp - facts kept in the runtime directory: read back only for their own
// key, whole, from a private directory, and never from a link, a torn file or an oversized one.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hip_backend/machine/runtime_fact_memo.h"
#include "tests/temp_dir.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::decode_runtime_fact;
using backend::encode_runtime_fact;
using backend::RuntimeFactMemo;

class RuntimeDir : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(root_.empty()); }
  static void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  const TempDir temp_{"hipacm-facts-"};
  const std::string root_ = temp_.path();
  const std::string dir_ = root_ + "/run";
};

TEST_F(RuntimeDir, AFactComesBackInAnotherMemoAndOnlyForItsKey) {
  RuntimeFactMemo writer(dir_);
  const std::string value("value\nwith lines\0and a nul", 26);
  writer.remember("key one", value);
  RuntimeFactMemo reader(dir_);
  EXPECT_EQ(reader.recall("key one"), std::optional<std::string>(value));
  EXPECT_EQ(reader.recall("key two"), std::nullopt);
  writer.remember("key one", "newer");
  EXPECT_EQ(reader.recall("key one"), std::optional<std::string>("newer"));
  EXPECT_EQ(fs::status(dir_ + "/facts").permissions() & fs::perms::all, fs::perms::owner_all);
  for (const auto& entry : fs::directory_iterator(dir_ + "/facts")) {
    EXPECT_EQ(entry.path().filename().string().rfind(".tmp", 0), std::string::npos)
        << "no temporary file is left behind";
    EXPECT_EQ(entry.status().permissions() & (fs::perms::group_all | fs::perms::others_all),
              fs::perms::none);
  }
}

TEST_F(RuntimeDir, AFileWrittenForAnotherKeyIsNotBelieved) {
  RuntimeFactMemo memo(dir_);
  memo.remember("a", "seed");  // makes the directories
  write_file(memo.path_for("b"), encode_runtime_fact("a", "a's value"));
  EXPECT_EQ(memo.recall("b"), std::nullopt);
}

TEST_F(RuntimeDir, LinksTornAndOversizedFilesAreNotRead) {
  RuntimeFactMemo memo(dir_);
  memo.remember("k", "v");
  ASSERT_EQ(memo.recall("k"), std::optional<std::string>("v"));
  const std::string path = memo.path_for("k");
  const std::string whole = encode_runtime_fact("k", "v");

  write_file(root_ + "/elsewhere", whole);
  fs::remove(path);
  fs::create_symlink(root_ + "/elsewhere", path);
  EXPECT_EQ(memo.recall("k"), std::nullopt) << "a link";

  fs::remove(path);
  write_file(path, whole.substr(0, whole.size() - 2));
  EXPECT_EQ(memo.recall("k"), std::nullopt) << "cut short";

  fs::remove(path);
  write_file(path, "");
  EXPECT_EQ(memo.recall("k"), std::nullopt) << "empty";

  fs::remove(path);
  write_file(path, whole + std::string(RuntimeFactMemo::kMaxFactFileBytes, 'x'));
  EXPECT_EQ(memo.recall("k"), std::nullopt) << "larger than the limit";

  fs::remove(path);
  fs::create_directory(path);
  EXPECT_EQ(memo.recall("k"), std::nullopt) << "a directory";
}

TEST_F(RuntimeDir, ADirectoryOthersCanWriteIsNeitherReadNorWritten) {
  RuntimeFactMemo memo(dir_);
  memo.remember("k", "v");
  ASSERT_EQ(memo.recall("k"), std::optional<std::string>("v"));
  ASSERT_EQ(::chmod((dir_ + "/facts").c_str(), 0777), 0);
  EXPECT_EQ(memo.recall("k"), std::nullopt);
  memo.remember("other", "v");
  EXPECT_FALSE(fs::exists(memo.path_for("other")));
  ASSERT_EQ(::chmod((dir_ + "/facts").c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0757), 0);
  EXPECT_EQ(memo.recall("k"), std::nullopt) << "the runtime directory itself is checked too";
}

TEST_F(RuntimeDir, AValueTooLargeIsNotKept) {
  RuntimeFactMemo memo(dir_);
  memo.remember("k", std::string(RuntimeFactMemo::kMaxFactFileBytes, 'x'));
  EXPECT_FALSE(fs::exists(memo.path_for("k")));
  EXPECT_EQ(memo.recall("k"), std::nullopt);
}

TEST(RuntimeFactRecord, MalformedRecordsAreRejected) {
  const std::string key = "the key";
  const std::string good = encode_runtime_fact(key, "payload");
  ASSERT_EQ(decode_runtime_fact(good, key), std::optional<std::string>("payload"));
  EXPECT_EQ(decode_runtime_fact(encode_runtime_fact(key, ""), key), std::optional<std::string>(""));
  const std::vector<std::string> bad = {
      "",
      "hipacm-fact-1 ",
      "hipacm-fact-2 7\nthe keypayload",
      "hipacm-fact-1 7",
      "hipacm-fact-1 \nthe keypayload",
      "hipacm-fact-1 -7\nthe keypayload",
      "hipacm-fact-1 +7\nthe keypayload",
      "hipacm-fact-1 7 \nthe keypayload",
      "hipacm-fact-1 07\nthe keypayload",
      "hipacm-fact-1 6\nthe keypayload",
      "hipacm-fact-1 8\nthe keypayload",
      "hipacm-fact-1 7\nthe ke",
      "hipacm-fact-1 7\nThe keypayload",
      "hipacm-fact-1 999999999\nthe key",
      "hipacm-fact-1 99999999999999999999\nthe key",
  };
  for (const std::string& record : bad)
    EXPECT_EQ(decode_runtime_fact(record, key), std::nullopt) << record;
}

}  // namespace
}  // namespace hipacm::test
