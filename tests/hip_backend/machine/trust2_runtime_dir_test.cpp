// SPDX-License-Identifier: MIT
// trust2_runtime_dir_test.cpp - the runtime directory: a default another user made first is passed
// over for a private fallback, a named directory must be dedicated to hipacm, and a FIFO planted
// anywhere in it never blocks a process.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "hip_backend/machine/machine_budget.h"
#include "hip_backend/machine/runtime_dir.h"
#include "hip_backend/machine/runtime_fact_memo.h"
#include "hip_backend/pch/runtime_header_pch_file.h"
#include "hip_backend/pch/runtime_header_pch_store.h"
#include "hip_backend/service/service_client.h"
#include "hip_backend/service/service_start_lock.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::MachineBudget;
using backend::MachineBudgetConfig;
using backend::RuntimeFactMemo;
using backend::RuntimeHeaderPchStore;

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

/// Runs `body` in a child process and returns its exit code, or -1 when it did not finish within
/// `seconds` (then the child is killed): a hang fails the test instead of stopping the suite.
int exit_code_of(const std::function<int()>& body, int seconds = 60) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  if (pid < 0) return -2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/// What a process whose default runtime directory was taken must still have: facts, the budget
/// and the PCH store, all in the fallback. 0 when every feature works there.
int features_work_in(const std::string& expected_dir) {
  const std::string dir = backend::runtime_dir_from_environment();
  if (dir != expected_dir) return 2;
  RuntimeFactMemo memo(dir);
  memo.remember("a fact", "its value");
  if (RuntimeFactMemo(dir).recall("a fact") != std::optional<std::string>("its value")) return 3;
  MachineBudgetConfig config = MachineBudgetConfig::from_environment(nullptr);
  config.limit = 2;
  MachineBudget budget(config);
  if (budget.limit() != 2 || budget.slot_file() != dir + "/worker-slots") return 4;
  if (!budget.acquire().held()) return 5;
  if (!RuntimeHeaderPchStore::in_runtime_dir().claim(std::string(64, 'a'))) return 6;
  if ((fs::status(dir).permissions() & fs::perms::all) != fs::perms::owner_all) return 7;
  return 0;
}

TEST(Trust2_04_RuntimeDir, ATakenXdgDefaultIsPassedOverForAPrivateDirectoryUnderHome) {
  TempDir root;
  const std::string xdg = root.path() + "/xdg";
  const std::string home = root.path() + "/home";
  ASSERT_EQ(::mkdir(xdg.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(home.c_str(), 0700), 0);
  // Taken first, open to everyone, as /tmp/hipacm-<uid> can be.
  const std::string squatted = xdg + "/hipacm";
  ASSERT_EQ(::mkdir(squatted.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(squatted.c_str(), 0777), 0);
  ScopedEnv named("HIPACM_RUNTIME_DIR", std::nullopt);
  ScopedEnv runtime("XDG_RUNTIME_DIR", xdg);
  ScopedEnv cache("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home_env("HOME", home);

  const backend::RuntimeDirChoice choice = backend::choose_runtime_dir();
  EXPECT_EQ(choice.passed_over, squatted);
  EXPECT_NE(choice.passed_over_because.find("writable by other users"), std::string::npos)
      << choice.passed_over_because;
  EXPECT_EQ(choice.path.rfind(home + "/.cache/hipacm/run-", 0), 0u) << choice.path;
  EXPECT_EQ(choice.path, backend::fallback_runtime_dir());
  EXPECT_EQ(features_work_in(choice.path), 0);
  EXPECT_TRUE(names_in(squatted).empty()) << "nothing goes into the directory that was taken";
  EXPECT_TRUE(fs::exists(choice.path + "/" + backend::kRuntimeDirMarker));
}

TEST(Trust2_04_RuntimeDir, ATakenTmpDefaultIsPassedOverForAPrivateDirectoryUnderHome) {
  // /tmp/hipacm-<uid> itself, made by another user before its owner's first compile. That
  // takes two users: root plays the one who made it, and a child becomes the victim.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as two users";
  uid_t victim = 0;  // test_doctor.py plays the same game with 65531 and below, at the same time
  for (uid_t uid : {65534u, 65533u, 65532u}) {
    struct stat st {};
    if (::lstat(("/tmp/hipacm-" + std::to_string(uid)).c_str(), &st) != 0) {
      victim = uid;
      break;
    }
  }
  if (victim == 0) GTEST_SKIP() << "every candidate uid already has a /tmp/hipacm-<uid>";
  const std::string squatted = "/tmp/hipacm-" + std::to_string(victim);
  ASSERT_EQ(::mkdir(squatted.c_str(), 0755), 0);  // root's, not the victim's
  TempDir root;
  ASSERT_EQ(::chmod(root.path().c_str(), 0755), 0);
  const std::string home = root.path() + "/home";
  ASSERT_EQ(::mkdir(home.c_str(), 0700), 0);
  ASSERT_EQ(::chown(home.c_str(), victim, victim), 0);
  const int code = exit_code_of([&] {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(victim, victim, victim) != 0 ||
        ::setresuid(victim, victim, victim) != 0)
      return 10;
    ::unsetenv("HIPACM_RUNTIME_DIR");
    ::unsetenv("XDG_RUNTIME_DIR");
    ::unsetenv("XDG_CACHE_HOME");
    ::setenv("HOME", home.c_str(), 1);
    const backend::RuntimeDirChoice choice = backend::choose_runtime_dir();
    if (choice.passed_over != squatted) return 11;
    if (choice.passed_over_because.find("another user") == std::string::npos) return 12;
    if (choice.path.rfind(home + "/.cache/hipacm/run-", 0) != 0) return 13;
    return features_work_in(choice.path);
  });
  const std::set<std::string> left = names_in(squatted);
  ::rmdir(squatted.c_str());
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(left.empty()) << "nothing goes into the directory that was taken";
}

TEST(Trust2_04_RuntimeDir, ANamedDirectoryThatIsNotDedicatedToHipacmIsRefusedAndLeftAlone) {
  TempDir root;
  // A directory of the user's with other files in it (as / or a home would be).
  const std::string busy = root.path() + "/busy";
  ASSERT_EQ(::mkdir(busy.c_str(), 0700), 0);
  { std::ofstream(busy + "/notes.txt") << "mine"; }
  // An empty one, but open to others (as / is).
  const std::string open = root.path() + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0755), 0);
  for (const std::string& dir : {busy, open}) {
    SCOPED_TRACE(dir);
    const std::set<std::string> before = names_in(dir);
    ScopedEnv named("HIPACM_RUNTIME_DIR", dir);
    EXPECT_EQ(backend::runtime_dir_from_environment(), dir)
        << "a named directory is never replaced";
    std::string why;
    const Expected<void> made = backend::make_runtime_directory(dir);
    EXPECT_FALSE(made);
    why = made.failure().message;
    EXPECT_NE(why.find(dir == busy ? "notes.txt" : "mode 0755"), std::string::npos) << why;
    MachineBudget budget(MachineBudgetConfig::from_environment(nullptr));
    EXPECT_EQ(budget.limit(), 0u);
    EXPECT_NE(budget.disabled_reason().find(dir), std::string::npos) << budget.disabled_reason();
    backend::runtime_fact_memo()->remember("a fact", "its value");
    EXPECT_EQ(backend::runtime_fact_memo()->recall("a fact"), std::nullopt);
    EXPECT_FALSE(RuntimeHeaderPchStore::in_runtime_dir().claim(std::string(64, 'a')));
    EXPECT_FALSE(backend::compile_service_socket(kWorkerPath, {"PATH=/usr/bin"}));
    EXPECT_EQ(names_in(dir), before) << "nothing was written into it";
  }
}

TEST(Trust2_04_RuntimeDir, AnEmptyPrivateDirectoryOrOneHipacmMadeIsAccepted) {
  TempDir root;  // what tests and scripts name: a fresh mkdtemp directory
  Expected<void> made = backend::make_runtime_directory(root.path());
  ASSERT_TRUE(made) << made.failure().message;
  EXPECT_TRUE(fs::is_regular_file(root.path() + "/" + backend::kRuntimeDirMarker));
  { std::ofstream(root.path() + "/left-by-a-user") << "x"; }
  made = backend::make_runtime_directory(root.path());
  EXPECT_TRUE(made) << "marked: " << made.failure().message;
  // Made by a hipacm before the marker: only hipacm's names in it.
  const std::string older = root.path() + "/older";
  ASSERT_EQ(::mkdir(older.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((older + "/pch").c_str(), 0700), 0);
  { std::ofstream(older + "/worker-slots") << ""; }
  { std::ofstream(older + "/compile-service-0123456789abcdef.sock.lock") << ""; }
  made = backend::make_runtime_directory(older);
  EXPECT_TRUE(made) << made.failure().message;
  made = backend::make_runtime_directory(root.path() + "/new");
  EXPECT_TRUE(made) << made.failure().message;
  EXPECT_EQ(fs::status(root.path() + "/new").permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST(Trust2_04_RuntimeDir, AFifoPlantedInTheRuntimeDirectoryNeverBlocks) {
  TempDir root;
  const std::string run = root.path() + "/run";
  ScopedEnv named("HIPACM_RUNTIME_DIR", run);
  const Expected<void> made = backend::make_runtime_directory(run);
  ASSERT_TRUE(made) << made.failure().message;
  // A fact file, a published PCH and its digest, a refusal note, a build lock, the service's
  // start lock and the budget's slot file, each a FIFO that no one will ever open for writing.
  RuntimeFactMemo memo(run);
  ASSERT_EQ(::mkdir((run + "/facts").c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo(memo.path_for("a fact").c_str(), 0600), 0);
  const RuntimeHeaderPchStore store(run + "/pch");
  const std::string key(64, 'b'), other(64, 'c'), third(64, 'd');
  ASSERT_EQ(::mkdir((run + "/pch").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((run + "/pch/" + key).c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((run + "/pch/" + key + "/" + backend::kRuntimeHeaderPchName).c_str(), 0600),
            0);
  { std::ofstream(run + "/pch/" + key + "/hiprtc_runtime.h.pch.sha256") << std::string(64, '0'); }
  ASSERT_EQ(::mkdir((run + "/pch/" + other).c_str(), 0700), 0);
  { std::ofstream(run + "/pch/" + other + "/" + backend::kRuntimeHeaderPchName) << "CPCH"; }
  ASSERT_EQ(::mkfifo((run + "/pch/" + other + "/hiprtc_runtime.h.pch.sha256").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((run + "/pch/" + key + ".refused").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((run + "/pch/" + third + ".lock").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((run + "/service.lock").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((run + "/worker-slots").c_str(), 0600), 0);

  const int code = exit_code_of([&] {
    if (memo.recall("a fact")) return 2;
    if (store.ready_dir(key) || store.ready_dir(other)) return 3;
    if (store.counts().ready != 0) return 4;
    store.refuse(key, "a reason");  // would wait for a reader of the FIFO
    if (store.claim(third)) return 5;
    if (backend::lock_service_start(run + "/service.lock", 0)) return 6;
    MachineBudgetConfig config;
    config.limit = 2;
    config.runtime_dir = run;
    if (MachineBudget(config).limit() != 0) return 7;
    return 0;
  });
  EXPECT_EQ(code, 0) << (code == -1 ? "a FIFO in the runtime directory blocked the process"
                                    : "a FIFO was taken for a file");
}

}  // namespace
}  // namespace hipacm::test
