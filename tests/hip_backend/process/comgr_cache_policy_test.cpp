// SPDX-License-Identifier: MIT
// comgr_cache_policy_test.cpp - workers compile as comgr does by default, with comgr's own cache
// pointed where nothing can be kept, unless the user chose it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hip_backend/pool/worker_process.h"
#include "hip_backend/process/comgr_cache_policy.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

using backend::apply_comgr_cache_policy;
using backend::comgr_cache_chosen_by_user;

/// The entries of /proc/<pid>/environ: what the process was started with.
std::vector<std::string> started_environment(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    out.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

/// Every entry of `env` that sets `name`.
std::vector<std::string> entries_for(const std::vector<std::string>& env, const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& e : env)
    if (e.starts_with(name + "=")) out.push_back(e);
  return out;
}

/// The environment of a live worker spawned with AMD_COMGR_CACHE and
/// AMD_COMGR_CACHE_DIR as given (nullopt: unset) in the host.
std::vector<std::string> worker_environment_with(std::optional<std::string> cache,
                                                 std::optional<std::string> cache_dir) {
  ScopedEnv a(backend::kComgrCacheVariable, std::move(cache));
  ScopedEnv b(backend::kComgrCacheDirVariable, std::move(cache_dir));
  auto spawned = backend::WorkerProcess::spawn(kWorkerPath);
  if (!spawned) {
    ADD_FAILURE() << spawned.failure().message;
    return {};
  }
  const auto worker = std::move(spawned).value();
  // posix_spawn returns once the exec has begun, which can be before the
  // kernel has placed the new environment: an empty read is "not yet".
  std::vector<std::string> env;
  EXPECT_TRUE(wait_until([&] { return !(env = started_environment(worker->pid())).empty(); }, 5000))
      << "cannot read the worker's /proc environ";
  return env;
}

using Entries = std::vector<std::string>;

const Entries kUnwritableDir = {std::string("AMD_COMGR_CACHE_DIR=") +
                                backend::kComgrUnwritableCacheDir};

TEST(ComgrCachePolicy, AWorkerKeepsComgrsDefaultSwitchWithADirectoryThatCannotExist) {
  const Entries env = worker_environment_with(std::nullopt, std::nullopt);
  // Unset, as in a program whose own hipRTC compiles: comgr 7.2 then preprocesses first, and its
  // logs quote the expanded lines.
  EXPECT_TRUE(entries_for(env, "AMD_COMGR_CACHE").empty());
  EXPECT_EQ(entries_for(env, "AMD_COMGR_CACHE_DIR"), kUnwritableDir);
  std::error_code ec;
  EXPECT_FALSE(std::filesystem::create_directories(backend::kComgrUnwritableCacheDir, ec));
  EXPECT_TRUE(ec) << "a cache directory that can be made could hold another user's entries";
}

TEST(ComgrCachePolicy, AnEmptySettingCountsAsUnsetAndIsReplaced) {
  // comgr reads an empty AMD_COMGR_CACHE as "on"; hipacm reads it as unset.
  const Entries env = worker_environment_with("", "");
  EXPECT_TRUE(entries_for(env, "AMD_COMGR_CACHE").empty());
  EXPECT_EQ(entries_for(env, "AMD_COMGR_CACHE_DIR"), kUnwritableDir);
}

TEST(ComgrCachePolicy, TheUsersAmdComgrCachePassesThroughUntouched) {
  EXPECT_EQ(entries_for(worker_environment_with("1", std::nullopt), "AMD_COMGR_CACHE"),
            Entries{"AMD_COMGR_CACHE=1"});
  EXPECT_EQ(entries_for(worker_environment_with("0", std::nullopt), "AMD_COMGR_CACHE"),
            Entries{"AMD_COMGR_CACHE=0"});
}

TEST(ComgrCachePolicy, TheUsersCacheDirectoryPassesThroughAndKeepsTheCacheOn) {
  const Entries env = worker_environment_with(std::nullopt, "/var/cache/comgr-of-the-user");
  EXPECT_TRUE(entries_for(env, "AMD_COMGR_CACHE").empty());
  EXPECT_EQ(entries_for(env, "AMD_COMGR_CACHE_DIR"),
            Entries{"AMD_COMGR_CACHE_DIR=/var/cache/comgr-of-the-user"});
}

TEST(ComgrCachePolicy, TheUsersChoiceIsReadFromEitherVariable) {
  {
    ScopedEnv a(backend::kComgrCacheVariable, std::nullopt);
    ScopedEnv b(backend::kComgrCacheDirVariable, std::nullopt);
    EXPECT_FALSE(comgr_cache_chosen_by_user());
  }
  {
    ScopedEnv a(backend::kComgrCacheVariable, "");
    ScopedEnv b(backend::kComgrCacheDirVariable, "");
    EXPECT_FALSE(comgr_cache_chosen_by_user());
  }
  {
    ScopedEnv a(backend::kComgrCacheVariable, "1");
    ScopedEnv b(backend::kComgrCacheDirVariable, std::nullopt);
    EXPECT_TRUE(comgr_cache_chosen_by_user());
  }
  {
    ScopedEnv a(backend::kComgrCacheVariable, std::nullopt);
    ScopedEnv b(backend::kComgrCacheDirVariable, "/d");
    EXPECT_TRUE(comgr_cache_chosen_by_user());
  }
}

TEST(ComgrCachePolicy, WithoutAChoiceEveryOtherSettingGivesWayToTheUnwritableDirectory) {
  // What a privileged host's worker would otherwise inherit: a value that
  // environment_value() ignored, listed twice.
  Entries env = {"PATH=/bin", "AMD_COMGR_CACHE=1", "AMD_COMGR_CACHE_POLICY=prune_after=1h",
                 "AMD_COMGR_CACHE=", "AMD_COMGR_CACHE_DIR=/elsewhere"};
  apply_comgr_cache_policy(&env, false);
  EXPECT_EQ(
      env, (Entries{"PATH=/bin", "AMD_COMGR_CACHE_POLICY=prune_after=1h", kUnwritableDir.front()}));
}

TEST(ComgrCachePolicy, AChoiceLeavesTheEnvironmentExactlyAsItWas) {
  const Entries before = {"PATH=/bin", "AMD_COMGR_CACHE=1", "AMD_COMGR_CACHE_DIR=/d"};
  Entries env = before;
  apply_comgr_cache_policy(&env, true);
  EXPECT_EQ(env, before);
}

}  // namespace
}  // namespace hipacm::test
