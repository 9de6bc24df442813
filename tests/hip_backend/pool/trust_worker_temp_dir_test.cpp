// SPDX-License-Identifier: MIT
// trust_worker_temp_dir_test.cpp - a worker's private TMPDIR never outlives it, however it ends.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <boost/thread/thread.hpp>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "hip_backend/process/private_temp_dir.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::CompileRequest;
using backend::CompileResult;
using backend::WorkerCompiler;

/// A fresh, empty directory set as TMPDIR for workers spawned in this scope.
/// Set before any thread of the test starts: setenv is not thread-safe.
class ScratchTmpdir {
 public:
  ScratchTmpdir() : env_("TMPDIR", dir_.path()) { backend::WorkerPool::instance().shutdown(); }
  // The workers go first: the directory is theirs until they are gone.
  ~ScratchTmpdir() { backend::WorkerPool::instance().shutdown(); }
  const std::string& path() const { return dir_.path(); }

  /// Every name directly inside the directory.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path())) out.push_back(e.path().filename());
    return out;
  }

 private:
  TempDir dir_{"hipacm-trust-worker-"};
  ScopedEnv env_;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += n + " ";
  return out;
}

/// A compile that keeps comgr busy for minutes: the constant evaluator spins.
CompileRequest endless_request() {
  CompileRequest r = make_request(
      "constexpr unsigned spin(unsigned n) {\n"
      "  unsigned x = 0;\n"
      "  for (unsigned i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;\n"
      "  return x;\n"
      "}\n"
      "extern \"C\" __global__ void endless(unsigned* out) {\n"
      "  constexpr unsigned v = spin(4000000000u);\n"
      "  out[0] = v;\n"
      "}\n",
      "endless.hip");
  r.options = {"-fconstexpr-steps=2147483647"};
  return r;
}

/// The comgr-* directory that a running compile made in the worker's private
/// TMPDIR under `base`, or "" while there is none.
std::string running_comgr_dir(const std::string& base) {
  std::error_code ec;
  for (const auto& worker_dir : fs::directory_iterator(base, ec)) {
    const std::string name = worker_dir.path().filename();
    if (name.rfind(backend::PrivateTempDir::kWorkerPrefix, 0) != 0) continue;
    for (const auto& inner : fs::directory_iterator(worker_dir.path(), ec)) {
      if (inner.path().filename().string().rfind("comgr-", 0) == 0) return inner.path();
    }
  }
  return "";
}

TEST(Trust01_WorkerTempDir, AWorkerKilledMidCompileLeavesNoSourceBehind) {
  ScratchTmpdir tmp;
  WorkerCompiler compiler(kWorkerPath, 1, 600000);
  const CompileRequest request = endless_request();
  CompileResult result;
  boost::thread compiling([&] { result = compiler.compile(request); });

  std::string comgr_dir;
  ASSERT_TRUE(
      wait_until([&] { return !(comgr_dir = running_comgr_dir(tmp.path())).empty(); }, 120000))
      << "the worker never started compiling in its private TMPDIR";
  struct stat st {};
  ASSERT_EQ(stat(fs::path(comgr_dir).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u) << "the worker's TMPDIR is not private";
  const std::vector<pid_t> workers = worker_children(false);
  ASSERT_EQ(workers.size(), 1u);
  ASSERT_EQ(kill(workers[0], SIGKILL), 0);
  compiling.join();

  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILER_CRASHED) << result.error_message;
  EXPECT_TRUE(tmp.entries().empty()) << "left behind: " << joined(tmp.entries());
}

TEST(Trust01_WorkerTempDir, ATimedOutWorkerLeavesNoSourceBehind) {
  ScratchTmpdir tmp;
  WorkerCompiler compiler(kWorkerPath, 1, 5000);
  // A warm worker: the timeout below is spent inside comgr, not starting up.
  const CompileResult warm = compiler.compile(make_request(kernel_source(1)));
  ASSERT_EQ(warm.status, HIPACM_SUCCESS) << warm.error_message;

  std::atomic<bool> done{false}, saw_comgr_dir{false};
  boost::thread watcher([&] {
    while (!done.load(std::memory_order_acquire)) {
      if (!running_comgr_dir(tmp.path()).empty()) saw_comgr_dir.store(true);
      boost::this_thread::sleep_for(boost::chrono::milliseconds(5));
    }
  });
  const CompileResult result = compiler.compile(endless_request());
  done.store(true, std::memory_order_release);
  watcher.join();

  EXPECT_EQ(result.status, HIPACM_ERROR_TIMEOUT) << result.error_message;
  EXPECT_TRUE(saw_comgr_dir.load()) << "the compile never reached comgr: nothing was tested";
  EXPECT_TRUE(tmp.entries().empty()) << "left behind: " << joined(tmp.entries());
}

TEST(Trust01_WorkerTempDir, EachCompileEmptiesItAndRetirementRemovesIt) {
  ScratchTmpdir tmp;
  std::string worker_dir;
  {
    WorkerCompiler compiler(kWorkerPath, 1, 120000);
    const CompileResult bad = compiler.compile(make_request("extern \"C\" __global__ void b( {}"));
    EXPECT_EQ(bad.status, HIPACM_ERROR_COMPILATION);
    const CompileResult good = compiler.compile(make_request(kernel_source(2)));
    ASSERT_EQ(good.status, HIPACM_SUCCESS) << good.error_message;
    const std::vector<std::string> names = tmp.entries();
    ASSERT_EQ(names.size(), 1u) << joined(names);
    EXPECT_EQ(names[0].rfind(backend::PrivateTempDir::kWorkerPrefix, 0), 0u) << names[0];
    worker_dir = tmp.path() + "/" + names[0];
    EXPECT_TRUE(fs::is_empty(worker_dir)) << "a finished compile left files in its TMPDIR";
  }
  backend::WorkerPool::instance().shutdown();
  EXPECT_FALSE(fs::exists(worker_dir));
  EXPECT_TRUE(tmp.entries().empty()) << "left behind: " << joined(tmp.entries());
}

TEST(Trust01_WorkerTempDir, NoPrivateDirectoryMeansNoWorker) {
  backend::WorkerPool::instance().shutdown();
  ScopedEnv missing("TMPDIR", "/nonexistent-hipacm-tmpdir");
  WorkerCompiler compiler(kWorkerPath, 1, 120000);
  const CompileResult result = compiler.compile(make_request(kernel_source(4)));
  EXPECT_EQ(result.status, HIPACM_ERROR_BACKEND_UNAVAILABLE) << result.error_message;
  EXPECT_NE(result.error_message.find("cannot create a private directory in "
                                      "/nonexistent-hipacm-tmpdir"),
            std::string::npos)
      << result.error_message;
  EXPECT_TRUE(worker_children().empty());
}

TEST(Trust01_WorkerTempDir, TheWorkerRefusesAnEscapingHeaderName) {
  // The host's request reader refuses this first; the worker is the second wall.
  ScratchTmpdir tmp;
  WorkerCompiler compiler(kWorkerPath, 1, 120000);
  CompileRequest request = make_request("#include \"x.h\"\n" + kernel_source(3));
  request.headers = {{"../../victim.txt", "overwritten\n"}, {"x.h", ""}};
  const CompileResult result = compiler.compile(request);
  EXPECT_EQ(result.status, HIPACM_ERROR_INVALID_ARGUMENT) << result.error_message;
  EXPECT_NE(result.error_message.find("header_names[0]"), std::string::npos)
      << result.error_message;
  EXPECT_FALSE(fs::exists(tmp.path() + "/victim.txt"));
}

}  // namespace
}  // namespace hipacm::test
