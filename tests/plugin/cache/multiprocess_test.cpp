// SPDX-License-Identifier: MIT
// multiprocess_test.cpp - threads, forked children and separate processes sharing one cache.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/store/schema.h"
#include "plugin/cache/store/store.h"
#include "tests/plugin/cache/cache_test_support.h"

extern char** environ;

namespace hipacm::cache_test {
namespace {

constexpr int kKernels = 6;

std::string warm_kernel(int i) { return kernel_source("warm_" + std::to_string(i)); }

// Compiles kKernels kernels in one mode with several pool threads; true when
// every one succeeded. Counts hits in *hits.
bool warm(const std::string& dir, int* hits) {
  const hipacm_mode_config cfg = cache_mode_config(dir, HIPACM_ISOLATION_IN_PROCESS, 3);
  hipacm_mode* mode = nullptr;
  if (hipacm_mode_enter(&cfg, &mode) != HIPACM_SUCCESS) return false;
  std::vector<std::string> sources;
  std::vector<hipacm_future*> futures;
  for (int i = 0; i < kKernels; ++i) sources.push_back(warm_kernel(i));
  bool ok = true;
  for (const auto& source : sources) {
    hipacm_request req{};
    req.struct_size = sizeof req;
    req.source = source.c_str();
    hipacm_future* f = nullptr;
    if (hipacm_submit(mode, &req, &f) != HIPACM_SUCCESS) ok = false;
    if (f != nullptr) futures.push_back(f);
  }
  *hits = 0;
  for (hipacm_future* f : futures) {
    const hipacm_kernel* k = nullptr;
    if (hipacm_future_result(f, &k) != HIPACM_SUCCESS || k->code_size == 0) ok = false;
    if (k != nullptr && k->from_cache) ++*hits;
    hipacm_future_release(f);
  }
  if (hipacm_mode_exit(mode, nullptr) != HIPACM_SUCCESS) ok = false;
  return ok && static_cast<int>(futures.size()) == kKernels;
}

void expect_one_valid_entry_per_kernel(const std::string& db) {
  auto admin = cache::CacheAdmin::open(db);
  const auto report = admin.verify(false);
  EXPECT_EQ(report.checked, kKernels);
  EXPECT_TRUE(report.bad.empty());
  std::set<std::string> keys;
  for (const auto& e : admin.list()) keys.insert(e.key);
  EXPECT_EQ(keys.size(), static_cast<std::size_t>(kKernels));
  EXPECT_EQ(admin.stats().entries, kKernels);
}

// The helper the multi-process tests run (several at once); skipped otherwise. It writes
// "<compiler runs> <cache hits>" to its report file.
TEST(CacheHelper, WarmCache) {
  const char* dir = std::getenv("HIPACM_CACHE_TEST_WARM_DIR");
  if (dir == nullptr) GTEST_SKIP() << "run by CacheConcurrency.*Processes*";
  int hits = 0;
  EXPECT_TRUE(warm(dir, &hits));
  hipacm_stats stats{};
  stats.struct_size = sizeof stats;
  ASSERT_EQ(hipacm_get_stats(&stats), HIPACM_SUCCESS);
  if (const char* report = std::getenv("HIPACM_CACHE_TEST_REPORT")) {
    std::ofstream out(report);
    out << stats.compiles << ' ' << hits << '\n';
  }
}

constexpr int kFreshOpenRounds = 25;
constexpr auto kFreshOpenRoundGap = std::chrono::milliseconds(20);

std::string fresh_round_db(const std::string& dir, int round) {
  return dir + "/" + std::to_string(round) + "-" + cache::kDatabaseFileName;
}

// The helper the fresh-open test runs (several at once); skipped otherwise. Round r opens
// its own new database at start + r * gap, the same instant as every other helper, so the
// opens meet while one of them switches the new file to WAL.
TEST(CacheHelper, OpenFreshDatabases) {
  const char* dir = std::getenv("HIPACM_CACHE_TEST_OPEN_DIR");
  const char* start_ms = std::getenv("HIPACM_CACHE_TEST_OPEN_START_MS");
  if (dir == nullptr || start_ms == nullptr) GTEST_SKIP() << "run by CacheConcurrency.*Fresh*";
  const std::chrono::system_clock::time_point start{
      std::chrono::milliseconds(std::stoll(start_ms))};
  for (int round = 0; round < kFreshOpenRounds; ++round) {
    std::this_thread::sleep_until(start + round * kFreshOpenRoundGap);
    try {
      auto store = cache::CacheStore::open(fresh_round_db(dir, round),
                                           cache::CacheStore::Access::kReadWrite, false);
      EXPECT_FALSE(store->find("absent").has_value());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": " << e.what();
    }
  }
}

pid_t spawn_helper_with(const std::string& test, std::vector<std::string> env_strings) {
  const std::string filter = "--gtest_filter=" + test;
  const std::string binary = HIPACM_CACHE_TEST_BINARY;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argv{const_cast<char*>(binary.c_str()), const_cast<char*>(filter.c_str()),
                          nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
  return pid;
}

pid_t spawn_helper(const std::string& dir, const std::string& report = "") {
  return spawn_helper_with("CacheHelper.WarmCache", {"HIPACM_CACHE_TEST_WARM_DIR=" + dir,
                                                     "HIPACM_CACHE_TEST_REPORT=" + report});
}

void expect_helpers_succeed(const std::vector<pid_t>& helpers) {
  for (pid_t pid : helpers) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "helper status " << status;
  }
}

// SQLite answers "database is locked" at once, without waiting, to a connection that meets
// another switching a new file to WAL; a cache must still open in every process.
TEST(CacheConcurrency, ProcessesOpeningOneFreshDatabaseAtOnceAllOpenIt) {
  constexpr int kProcesses = 8;
  TempDir dir;
  const auto start = std::chrono::system_clock::now() + std::chrono::milliseconds(500);
  const auto start_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(start.time_since_epoch()).count();
  std::vector<pid_t> helpers;
  for (int i = 0; i < kProcesses; ++i) {
    helpers.push_back(
        spawn_helper_with("CacheHelper.OpenFreshDatabases",
                          {"HIPACM_CACHE_TEST_OPEN_DIR=" + dir.path(),
                           "HIPACM_CACHE_TEST_OPEN_START_MS=" + std::to_string(start_ms)}));
    ASSERT_GT(helpers.back(), 0);
  }
  expect_helpers_succeed(helpers);
  for (int round = 0; round < kFreshOpenRounds; ++round) {
    auto admin = cache::CacheAdmin::open(fresh_round_db(dir.path(), round));
    EXPECT_EQ(admin.stats().entries, 0) << "round " << round;
  }
}

TEST(CacheConcurrency, TwoProcessesWarmTheSameCache) {
  TempDir dir;
  const pid_t a = spawn_helper(dir.path());
  const pid_t b = spawn_helper(dir.path());
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  expect_helpers_succeed({a, b});
  expect_one_valid_entry_per_kernel(dir.db());
  int hits = 0;
  EXPECT_TRUE(warm(dir.path(), &hits));
  EXPECT_EQ(hits, kKernels);
}

// Processes that warm the same kernels into one cache at once compile each kernel once between
// them (the claim on its key); the others wait and are served the stored object as a hit.
TEST(CacheConcurrency, FourProcessesCompileEachKernelOnceBetweenThem) {
  constexpr int kProcesses = 4;
  TempDir dir;
  TempDir reports;
  std::vector<pid_t> helpers;
  for (int i = 0; i < kProcesses; ++i) {
    helpers.push_back(spawn_helper(dir.path(), reports.path() + "/" + std::to_string(i)));
    ASSERT_GT(helpers.back(), 0);
  }
  expect_helpers_succeed(helpers);
  std::uint64_t compiles = 0;
  int hits = 0;
  for (int i = 0; i < kProcesses; ++i) {
    std::ifstream in(reports.path() + "/" + std::to_string(i));
    std::uint64_t helper_compiles = 0;
    int helper_hits = 0;
    ASSERT_TRUE(in >> helper_compiles >> helper_hits) << "helper " << i << " wrote no report";
    EXPECT_EQ(helper_compiles + static_cast<std::uint64_t>(helper_hits),
              static_cast<std::uint64_t>(kKernels))
        << "helper " << i << ": every kernel is compiled or served";
    compiles += helper_compiles;
    hits += helper_hits;
  }
  EXPECT_EQ(compiles, static_cast<std::uint64_t>(kKernels)) << "compiled once on the machine";
  EXPECT_EQ(hits, (kProcesses - 1) * kKernels);
  expect_one_valid_entry_per_kernel(dir.db());
}

TEST(CacheConcurrency, PoolThreadsShareTheStore) {
  TempDir dir;
  int hits = 0;
  ASSERT_TRUE(warm(dir.path(), &hits));
  EXPECT_EQ(hits, 0);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(warm(dir.path(), &hits));
    EXPECT_EQ(hits, kKernels);
  }
  expect_one_valid_entry_per_kernel(dir.db());
}

// Hits are served on the submitting threads: eight of them at once share the
// store's connection, while misses compile and insert on the pool.
TEST(CacheConcurrency, SubmittingThreadsHitTogether) {
  TempDir dir;
  int hits = 0;
  ASSERT_TRUE(warm(dir.path(), &hits));
  const hipacm_mode_config cfg = cache_mode_config(dir.path(), HIPACM_ISOLATION_IN_PROCESS, 2);
  hipacm_mode* mode = nullptr;
  ASSERT_EQ(hipacm_mode_enter(&cfg, &mode), HIPACM_SUCCESS);
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  std::atomic<int> from_cache{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // Distinct host keys: every submit is a lookup, not a dedup. Thread 0
        // also submits one new kernel per round, compiled and stored meanwhile.
        const bool fresh = t == 0 && round % 5 == 0;
        const std::string source =
            fresh ? kernel_source("fresh_" + std::to_string(round)) : warm_kernel(round % kKernels);
        std::string key =
            std::to_string(t);  // (appending sidesteps a GCC 12 -Wrestrict false positive)
        key += '-';
        key += std::to_string(round);
        hipacm_request req{};
        req.struct_size = sizeof req;
        req.source = source.c_str();
        req.key = key.c_str();
        hipacm_future* f = nullptr;
        if (hipacm_submit(mode, &req, &f) != HIPACM_SUCCESS) {
          failures.fetch_add(1);
          continue;
        }
        const hipacm_kernel* k = nullptr;
        if (hipacm_future_result(f, &k) != HIPACM_SUCCESS) failures.fetch_add(1);
        if (k != nullptr && k->from_cache) from_cache.fetch_add(1);
        hipacm_future_release(f);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(hipacm_mode_exit(mode, nullptr), HIPACM_SUCCESS);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(from_cache.load(), kThreads * kRounds - kRounds / 5);
  auto admin = cache::CacheAdmin::open(dir.db());
  EXPECT_EQ(admin.stats().entries, kKernels + kRounds / 5);
  EXPECT_TRUE(admin.verify(false).bad.empty());
}

TEST(CacheConcurrency, ForkedChildUsesItsOwnConnection) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer runtime does not support threads after a multi-threaded fork";
#else
  TempDir dir;
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  ASSERT_TRUE(compile_in_mode(dir.path()).from_cache);  // the parent's connection is open
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CompileSpec fresh;
    fresh.source = kernel_source("from_child");
    const bool ok = compile_in_mode(dir.path()).from_cache &&
                    compile_in_mode(dir.path(), fresh).status == HIPACM_SUCCESS;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  CompileSpec fresh;
  fresh.source = kernel_source("from_child");
  EXPECT_TRUE(compile_in_mode(dir.path(), fresh).from_cache) << "the child's insert is visible";
  EXPECT_TRUE(cache::CacheAdmin::open(dir.db()).verify(false).bad.empty());
#endif
}

}  // namespace
}  // namespace hipacm::cache_test
