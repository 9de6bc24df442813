// SPDX-License-Identifier: MIT
// prestart_test.cpp - workers started and warmed ahead of a mode's compiles: used by them, never
// more than asked, retired when their warm-up fails, and gone after a shutdown that overtakes them.
#include <gtest/gtest.h>

#include <boost/thread/thread.hpp>

#include <atomic>
#include <set>
#include <vector>

#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "support/stats.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

using backend::CompileResult;
using backend::WorkerCompiler;
using backend::WorkerPool;

constexpr int kStartMs = 60000;

TEST(Prestart, WarmWorkersServeTheFirstCompilesAndNoneIsAdded) {
  WorkerPool& pool = WorkerPool::instance();
  pool.shutdown();
  pool.prestart(kWorkerPath, 2, kArch, 0);
  pool.prestart(kWorkerPath, 2, kArch, 0);  // tops up to 2: nothing more to start
  ASSERT_TRUE(wait_until([&] { return pool.idle_count() == 2; }, kStartMs))
      << "two warmed workers are idle before any compile";
  const std::vector<pid_t> started = worker_children(false);
  EXPECT_EQ(started.size(), 2u);

  WorkerCompiler compiler(kWorkerPath, 2, 60000);
  std::vector<CompileResult> results(4);
  boost::thread_group threads;
  for (int t = 0; t < 2; ++t) {
    threads.create_thread([&, t] {
      for (int i = t; i < 4; i += 2) results[i] = compiler.compile(make_request(kernel_source(i)));
    });
  }
  threads.join_all();
  for (int i = 0; i < 4; ++i) expect_gfx90a_kernel(results[i], "k" + std::to_string(i));
  EXPECT_EQ(worker_children(false), started) << "the compiles ran on the prestarted workers";
}

TEST(Prestart, CompilesThatArriveWhileWorkersStartWaitForThem) {
  WorkerPool& pool = WorkerPool::instance();
  for (int round = 0; round < 5; ++round) {
    pool.shutdown();
    pool.prestart(kWorkerPath, 2, kArch, 0);
    WorkerCompiler compiler(kWorkerPath, 2, 60000);
    std::atomic<int> ok{0};
    boost::thread_group threads;
    for (int t = 0; t < 3; ++t) {
      threads.create_thread([&, t] {
        const CompileResult r = compiler.compile(make_request(kernel_source(round * 3 + t)));
        if (r.status == HIPACM_SUCCESS && !r.code.empty()) ok.fetch_add(1);
      });
    }
    threads.join_all();
    EXPECT_EQ(ok.load(), 3) << "round " << round;
    EXPECT_TRUE(wait_until([&] { return pool.busy_count() == 0; }, kStartMs));
    EXPECT_EQ(worker_children(false).size(), 2u) << "round " << round << ": no third worker";
  }
}

TEST(Prestart, AWorkerWhoseWarmupFailsIsRetiredAndCompilesGoOn) {
  FaultScope crash("crash-segv:when=hipacm_warmup");
  WorkerPool& pool = WorkerPool::instance();
  const std::uint64_t crashes = backend::stats().worker_crashes.load();
  pool.prestart(kWorkerPath, 1, kArch, 0);
  ASSERT_TRUE(
      wait_until([&] { return backend::stats().worker_crashes.load() == crashes + 1; }, kStartMs))
      << "the warm-up crashed its worker";
  ASSERT_TRUE(
      wait_until([&] { return pool.busy_count() == 0 && worker_children().empty(); }, kStartMs))
      << "the crashed worker is reaped";
  EXPECT_EQ(pool.idle_count(), 0u) << "a worker that failed its warm-up is not kept";
  WorkerCompiler compiler(kWorkerPath, 1, 60000);
  expect_gfx90a_kernel(compiler.compile(make_request(kernel_source(7))), "k7");
}

TEST(Prestart, AShutdownThatOvertakesStartingWorkersLeavesNothing) {
  // Workers that linger as they exit: shutdown() must wait for a retiring one, not only for the
  // busy count a prestart's checkin gives back before its worker is gone.
  FaultScope linger("slow-exit=300");
  WorkerPool& pool = WorkerPool::instance();
  pool.shutdown();
  const int fds_before = open_fd_count();
  for (int round = 0; round < 10; ++round) {
    pool.prestart(kWorkerPath, 3, kArch, 0);
    if (round % 2 == 1) boost::this_thread::sleep_for(boost::chrono::milliseconds(20 * round));
    pool.shutdown();
    EXPECT_EQ(pool.idle_count(), 0u) << "round " << round;
    EXPECT_EQ(pool.busy_count(), 0u) << "round " << round;
    EXPECT_EQ(worker_children(), std::vector<pid_t>())
        << "round " << round << ": no worker "
        << "outlives the shutdown, not even a zombie";
    EXPECT_EQ(open_fd_count(), fds_before) << "round " << round;
    EXPECT_EQ(backend::WorkerFdRegistry::size(), 0u) << "round " << round;
  }
}

}  // namespace
}  // namespace hipacm::test
