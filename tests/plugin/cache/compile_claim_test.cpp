// SPDX-License-Identifier: MIT
// compile_claim_test.cpp - claims on cache keys: exclusion between threads and processes, release
// when the holder dies or lets go, a fork()ed child that inherited one, and an unusable claim file.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/compile_claim.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

using cache::CompileClaim;
using std::chrono::milliseconds;

const std::string kKey = "3e29e87f8437a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5";
const std::string kOtherKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// Waits, in a child, until the parent says go (a byte on `pipe_fd`), holding what it holds.
void hold_until_told(int pipe_fd) {
  char byte = 0;
  while (::read(pipe_fd, &byte, 1) < 0) {
  }
}

TEST(CompileClaim, OneHolderAtATimeAndFreeOnceReleased) {
  TempDir dir;
  CompileClaim first = CompileClaim::acquire(dir.db(), kKey, milliseconds(0));
  ASSERT_TRUE(first.held());
  EXPECT_EQ(first.waited().count(), 0);
  // Another description in the same process is another holder: it must wait, and here gives up.
  const CompileClaim second = CompileClaim::acquire(dir.db(), kKey, milliseconds(20));
  EXPECT_FALSE(second.held());
  // Another key is another byte.
  EXPECT_TRUE(CompileClaim::acquire(dir.db(), kOtherKey, milliseconds(0)).held());
  first = CompileClaim();  // released
  EXPECT_TRUE(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)).held());
  struct stat st {};
  ASSERT_EQ(::stat(CompileClaim::claim_file(dir.db()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "the claim file is private like the database";
}

TEST(CompileClaim, AKilledHolderReleasesAtOnce) {
  TempDir dir;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const CompileClaim claim = CompileClaim::acquire(dir.db(), kKey, milliseconds(0));
    const char held = claim.held() ? 'y' : 'n';
    if (::write(ready[1], &held, 1) != 1) ::_exit(2);
    hold_until_told(go[0]);
    ::_exit(0);
  }
  char held = 0;
  ASSERT_EQ(::read(ready[0], &held, 1), 1);
  ASSERT_EQ(held, 'y');
  EXPECT_FALSE(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)).held()) << "the child has it";
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // Its descriptors closed as it died: the claim is free, with no wait and no lease to run out.
  EXPECT_TRUE(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)).held());
  for (int fd : {go[0], go[1], ready[0], ready[1]}) ::close(fd);
}

TEST(CompileClaim, AChildThatInheritedAClaimDoesNotKeepItOnceTheHolderLetsGo) {
  TempDir dir;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  auto claim =
      std::make_unique<CompileClaim>(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)));
  ASSERT_TRUE(claim->held());
  const pid_t child = ::fork();  // inherits the claim's descriptor, and lives on
  ASSERT_GE(child, 0);
  if (child == 0) {
    hold_until_told(go[0]);
    ::_exit(0);
  }
  claim.reset();
  // The child is still alive with its copy of the descriptor.
  ASSERT_EQ(::waitpid(child, nullptr, WNOHANG), 0);
  EXPECT_TRUE(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)).held());
  ASSERT_EQ(::write(go[1], "x", 1), 1);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  ::close(go[0]);
  ::close(go[1]);
}

TEST(CompileClaim, AClaimFileThatIsNotAPrivateRegularFileGivesNoClaim) {
  TempDir dir;
  const std::string claims = CompileClaim::claim_file(dir.db());
  // A link is never followed (it could point anywhere), and a FIFO is never opened for a lock.
  std::filesystem::create_symlink(dir.path() + "/elsewhere", claims);
  EXPECT_FALSE(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)).held());
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/elsewhere"));
  std::filesystem::remove(claims);
  ASSERT_EQ(::mkfifo(claims.c_str(), 0600), 0);
  EXPECT_FALSE(CompileClaim::acquire(dir.db(), kKey, milliseconds(0)).held());
}

// Waiting for another process's compile of the same kernel stands in for compiling it: a mode's
// per-compile limit bounds the wait, and a wait that reaches it ends as a timeout would.
TEST(CompileClaim, AWaitForAnotherCompileEndsAtTheModesCompileTimeout) {
  TempDir learn;
  ASSERT_EQ(compile_in_mode(learn.path()).status, HIPACM_SUCCESS);
  const auto entries = cache::CacheAdmin::open(learn.db()).list();
  ASSERT_EQ(entries.size(), 1u);
  const std::string key = entries.front().key;

  TempDir dir;
  CompileClaim other = CompileClaim::acquire(dir.db(), key, milliseconds(0));
  ASSERT_TRUE(other.held());
  CompileSpec limited;
  limited.compile_timeout_ms = 200;
  const Outcome waited = compile_in_mode(dir.path(), limited);
  EXPECT_EQ(waited.status, HIPACM_ERROR_TIMEOUT);
  EXPECT_NE(waited.error_message.find("timed out after 200 ms waiting for another process's "
                                      "compile of the same kernel"),
            std::string::npos)
      << waited.error_message;
  EXPECT_EQ(cache::CacheAdmin::open(dir.db()).stats().entries, 0) << "nothing was stored";

  other = CompileClaim();  // the other compile ended without storing anything
  const Outcome compiled = compile_in_mode(dir.path(), limited);
  EXPECT_EQ(compiled.status, HIPACM_SUCCESS);
  EXPECT_FALSE(compiled.from_cache);
}

TEST(CompileClaim, KeysMapToStableOffsets) {
  EXPECT_EQ(CompileClaim::offset_of("00000000001"), 1);
  EXPECT_EQ(CompileClaim::offset_of("ffffffffffffffff"), (std::int64_t{1} << 44) - 1);
  EXPECT_EQ(CompileClaim::offset_of(kKey), CompileClaim::offset_of(kKey.substr(0, 11) + "zz"));
  EXPECT_NE(CompileClaim::offset_of(kKey), CompileClaim::offset_of(kOtherKey));
}

}  // namespace
}  // namespace hipacm::cache_test
