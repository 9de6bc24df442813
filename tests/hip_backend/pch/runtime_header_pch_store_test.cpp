// SPDX-License-Identifier: MIT
// runtime_header_pch_store_test.cpp - the PCH store: only well-formed keys, only plausible files of
// this user in private directories, one builder per key, nothing staged left behind, a bounded
// number of entries.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "hip_backend/pch/runtime_header_pch_file.h"
#include "hip_backend/pch/runtime_header_pch_store.h"
#include "tests/temp_dir.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::kRuntimeHeaderPchName;
using backend::RuntimeHeaderPchStore;

std::string key_of(int i) {
  std::string key = std::to_string(i);
  key.insert(0, 64 - key.size(), 'a');
  return key;
}

const std::string kPch = std::string("CPCH") + std::string(1000, '\x01');

class PchStore : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(root_.empty());
    store_.emplace(root_ + "/run/pch");
  }
  /// Publishes `bytes` for `key` through a claim, as a builder does.
  void publish(const std::string& key, const std::string& bytes = kPch) {
    Expected<RuntimeHeaderPchStore::Claim> claim = store_->claim(key);
    ASSERT_TRUE(claim);
    const Expected<void> staged = claim->make_staging_dir();
    ASSERT_TRUE(staged) << staged.failure().message;
    std::ofstream(claim->staging_dir() + "/" + kRuntimeHeaderPchName, std::ios::binary) << bytes;
    const Expected<void> published = claim->publish();
    ASSERT_TRUE(published) << published.failure().message;
  }
  std::string pch_path(const std::string& key) const {
    return store_->root() + "/" + key + "/" + kRuntimeHeaderPchName;
  }

  const TempDir temp_{"hipacm-pch-"};
  const std::string root_ = temp_.path();
  std::optional<RuntimeHeaderPchStore> store_;
};

TEST(PchStoreKeys, OnlySixtyFourLowercaseHexDigitsAreKeys) {
  EXPECT_TRUE(backend::valid_runtime_header_pch_key(key_of(1)));
  EXPECT_FALSE(backend::valid_runtime_header_pch_key(""));
  EXPECT_FALSE(backend::valid_runtime_header_pch_key(key_of(1).substr(1)));
  EXPECT_FALSE(backend::valid_runtime_header_pch_key(key_of(1) + "0"));
  std::string upper = key_of(1);
  upper[0] = 'A';
  EXPECT_FALSE(backend::valid_runtime_header_pch_key(upper));
  std::string climbs = key_of(1);
  climbs.replace(0, 3, "../");
  EXPECT_FALSE(backend::valid_runtime_header_pch_key(climbs));
}

TEST_F(PchStore, APublishedPchIsReadyInAPrivateDirectoryAndNothingStagedRemains) {
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  publish(key_of(1));
  EXPECT_EQ(store_->ready_dir(key_of(1)),
            std::optional<std::string>(store_->root() + "/" + key_of(1)));
  EXPECT_EQ(store_->ready_dir(key_of(2)), std::nullopt);
  EXPECT_EQ(fs::status(store_->root()).permissions() & fs::perms::all, fs::perms::owner_all);
  for (const auto& entry : fs::directory_iterator(store_->root())) {
    EXPECT_EQ(entry.path().filename().string().rfind(".stage-", 0), std::string::npos);
  }
  std::ifstream in(pch_path(key_of(1)), std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), kPch);
}

TEST_F(PchStore, OneBuilderPerKeyAndAClaimEndsWithItsHolder) {
  {
    Expected<RuntimeHeaderPchStore::Claim> claimed = store_->claim(key_of(1));
    ASSERT_TRUE(claimed);
    std::optional<RuntimeHeaderPchStore::Claim> first(std::move(claimed).value());
    std::string why;
    const Expected<RuntimeHeaderPchStore::Claim> held = store_->claim(key_of(1));
    EXPECT_FALSE(held);
    if (!held) why = held.failure().message;
    EXPECT_NE(why.find("another process"), std::string::npos) << why;
    EXPECT_TRUE(store_->claim(key_of(2))) << "other keys are not held";
    const Expected<void> made = first->make_staging_dir();
    ASSERT_TRUE(made) << made.failure().message;
    EXPECT_TRUE(fs::exists(first->staging_dir()));
    EXPECT_FALSE(first->publish()) << "nothing plausible was staged yet";
    std::ofstream(first->staging_dir() + "/" + kRuntimeHeaderPchName) << "not a PCH";
    const Expected<void> published = first->publish();
    EXPECT_FALSE(published);
    why = published.failure().message;
    EXPECT_NE(why.find("plausible"), std::string::npos) << why;
    const std::string staged = first->staging_dir();
    std::optional<RuntimeHeaderPchStore::Claim> moved(std::move(*first));
    first.reset();
    EXPECT_TRUE(fs::exists(staged)) << "a moved-from claim removes nothing";
    moved.reset();
    EXPECT_FALSE(fs::exists(staged)) << "what was staged and not published goes with the claim";
  }
  EXPECT_TRUE(store_->claim(key_of(1))) << "the claim was released";
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
}

TEST_F(PchStore, StagingThatAKilledBuilderLeftIsRemovedOnceStale) {
  publish(key_of(1));  // makes the store
  const std::string stale = store_->root() + "/.stage-stale1",
                    fresh = store_->root() + "/.stage-fresh1";
  fs::create_directory(stale);
  fs::create_directory(fresh);
  std::ofstream(stale + "/" + kRuntimeHeaderPchName) << kPch;
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  Expected<RuntimeHeaderPchStore::Claim> claim = store_->claim(key_of(2));
  ASSERT_TRUE(claim);
  const Expected<void> staged = claim->make_staging_dir();
  ASSERT_TRUE(staged) << staged.failure().message;
  EXPECT_FALSE(fs::exists(stale)) << "an hour-old staging directory lost its builder";
  EXPECT_TRUE(fs::exists(fresh)) << "a recent one may still be in use";
}

TEST_F(PchStore, ARefusedKeyStaysRefusedAndAForgottenPchIsGone) {
  {
    Expected<RuntimeHeaderPchStore::Claim> claim = store_->claim(key_of(1));
    ASSERT_TRUE(claim);
    claim->refuse("differed");
  }
  EXPECT_TRUE(store_->refused(key_of(1)));
  EXPECT_FALSE(store_->refused(key_of(2)));
  publish(key_of(2));
  ASSERT_TRUE(store_->ready_dir(key_of(2)));
  store_->forget(key_of(2));
  EXPECT_EQ(store_->ready_dir(key_of(2)), std::nullopt);
  EXPECT_FALSE(fs::exists(store_->root() + "/" + key_of(2)));
}

TEST_F(PchStore, OnlyAPlausiblePchOfThisUserIsReady) {
  publish(key_of(1));
  const std::string path = pch_path(key_of(1));
  // Not a PCH.
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "#include <evil>\n";
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  // Empty.
  std::ofstream(path, std::ios::binary | std::ios::trunc).close();
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  // A link to a real PCH elsewhere.
  const std::string elsewhere = root_ + "/elsewhere.pch";
  std::ofstream(elsewhere, std::ios::binary) << kPch;
  fs::remove(path);
  fs::create_symlink(elsewhere, path);
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  // Larger than any PCH of the header: only its size is read.
  fs::remove(path);
  std::ofstream(path, std::ios::binary) << kPch;
  fs::resize_file(path, backend::kMaxRuntimeHeaderPchBytes + 1);
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  fs::resize_file(path, kPch.size());
  EXPECT_TRUE(store_->ready_dir(key_of(1)));
  // The key's directory as a link, or writable by others.
  const std::string dir = store_->root() + "/" + key_of(1);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  fs::rename(dir, root_ + "/moved");
  fs::create_directory_symlink(root_ + "/moved", dir);
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
}

TEST_F(PchStore, AStoreOthersCanWriteIsNotUsed) {
  publish(key_of(1));
  ASSERT_EQ(::chmod(store_->root().c_str(), 0777), 0);
  EXPECT_EQ(store_->ready_dir(key_of(1)), std::nullopt);
  const Expected<RuntimeHeaderPchStore::Claim> claim = store_->claim(key_of(2));
  EXPECT_FALSE(claim);
  const std::string why = claim ? std::string() : claim.failure().message;
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(store_->refused(key_of(1)));
}

TEST_F(PchStore, BadKeysReachNoFile) {
  const std::string climbs = "../../" + std::string(58, 'a');
  EXPECT_FALSE(store_->claim(climbs));
  EXPECT_EQ(store_->ready_dir(climbs), std::nullopt);
  EXPECT_FALSE(store_->refused(climbs));
  store_->forget("..");
  EXPECT_TRUE(fs::exists(root_)) << "forget never leaves the store";
}

TEST_F(PchStore, PublishingBeyondTheBoundRemovesTheOldest) {
  const std::size_t bound = RuntimeHeaderPchStore::kMaxEntries;
  for (std::size_t i = 0; i < bound; ++i) {
    publish(key_of(static_cast<int>(i)));
    // Distinct ages, oldest first.
    const std::string dir = store_->root() + "/" + key_of(static_cast<int>(i));
    const fs::file_time_type when =
        fs::file_time_type::clock::now() - std::chrono::hours(static_cast<int>(bound - i));
    fs::last_write_time(dir, when);
  }
  publish(key_of(1000));
  std::size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(store_->root())) {
    if (entry.is_directory() && backend::valid_runtime_header_pch_key(entry.path().filename()))
      ++entries;
  }
  EXPECT_EQ(entries, bound);
  EXPECT_EQ(store_->ready_dir(key_of(0)), std::nullopt) << "the oldest went";
  EXPECT_FALSE(fs::exists(store_->root() + "/" + key_of(0) + ".lock")) << "and its lock file";
  EXPECT_TRUE(fs::exists(store_->root() + "/" + key_of(1) + ".lock"));
  EXPECT_TRUE(store_->ready_dir(key_of(1)));
  EXPECT_TRUE(store_->ready_dir(key_of(1000)));
}

}  // namespace
}  // namespace hipacm::test
