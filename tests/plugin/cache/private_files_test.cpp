// SPDX-License-Identifier: MIT
// private_files_test.cpp - cache directories and files are private whatever the umask, and export
// never follows a symlink.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "plugin/cache/cache_admin.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

namespace fs = std::filesystem;

// Sets the process umask for the test and restores it afterwards.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : saved_(::umask(mask)) {}
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;
  ~ScopedUmask() { ::umask(saved_); }

 private:
  mode_t saved_;
};

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

class Trust02_PrivateFiles : public CacheEnvironment {};

TEST_F(Trust02_PrivateFiles, CreatedDirectoriesAre0700AndDatabaseFiles0600UnderUmaskZero) {
  TempDir root;
  // A directory the user made stays as the user made it.
  ASSERT_EQ(::chmod(root.path().c_str(), 0755), 0);
  const std::string cache_dir = root.path() + "/a/b/hipacm";
  {
    ScopedUmask permissive(0);
    ASSERT_EQ(compile_in_mode(cache_dir).status, HIPACM_SUCCESS);
  }
  EXPECT_EQ(mode_of(root.path()), 0755u);
  for (const std::string& dir : {root.path() + "/a", root.path() + "/a/b", cache_dir})
    EXPECT_EQ(mode_of(dir), 0700u) << dir;
  const std::string db = cache_dir + "/" + cache::kDatabaseFileName;
  EXPECT_EQ(mode_of(db), 0600u);
  // The connection stays open in this process, so WAL's files exist now.
  for (const std::string& side : {db + "-wal", db + "-shm"}) {
    ASSERT_TRUE(fs::exists(side)) << side;
    EXPECT_EQ(mode_of(side), 0600u) << side;
  }
}

TEST_F(Trust02_PrivateFiles, AdminOpenAndExportCreatePrivateFilesUnderUmaskZero) {
  TempDir source, files;
  ASSERT_EQ(compile_in_mode(source.path()).status, HIPACM_SUCCESS);
  ScopedUmask permissive(0);
  const std::string new_dir = files.path() + "/made/by/admin";
  cache::CacheAdmin::open(new_dir + "/" + cache::kDatabaseFileName);
  EXPECT_EQ(mode_of(files.path() + "/made"), 0700u);
  EXPECT_EQ(mode_of(new_dir), 0700u);
  EXPECT_EQ(mode_of(new_dir + "/" + cache::kDatabaseFileName), 0600u);

  const std::string exported = files.path() + "/out.sqlite3";
  EXPECT_EQ(cache::CacheAdmin::open(source.db()).export_to(exported), 1u);
  EXPECT_EQ(mode_of(exported), 0600u);
  // Complete and alone: no temporary file or journal is left beside it.
  EXPECT_EQ(names_in(files.path()), (std::set<std::string>{"made", "out.sqlite3"}));
}

TEST_F(Trust02_PrivateFiles, ExportToADanglingSymlinkIsRefusedAndCreatesNothing) {
  TempDir source, files;
  ASSERT_EQ(compile_in_mode(source.path()).status, HIPACM_SUCCESS);
  const std::string victim = files.path() + "/victim.txt";
  const std::string link = files.path() + "/export.sqlite3";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  auto admin = cache::CacheAdmin::open(source.db());
  expect_refused([&] { admin.export_to(link); }, "is a symbolic link",
                 "an export to a dangling symlink");
  EXPECT_FALSE(fs::exists(victim));
  EXPECT_EQ(names_in(files.path()), std::set<std::string>{"export.sqlite3"});
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(Trust02_PrivateFiles, ExportToASymlinkToAFileLeavesThatFileAlone) {
  TempDir source, files;
  ASSERT_EQ(compile_in_mode(source.path()).status, HIPACM_SUCCESS);
  const std::string victim = files.path() + "/victim.txt";
  std::ofstream(victim) << "precious";
  const std::string link = files.path() + "/export.sqlite3";
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  EXPECT_THROW(cache::CacheAdmin::open(source.db()).export_to(link), std::runtime_error);
  std::ifstream in(victim);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "precious");
}

}  // namespace
}  // namespace hipacm::cache_test
