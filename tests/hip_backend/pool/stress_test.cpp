// SPDX-License-Identifier: MIT
// stress_test.cpp - 1,000 compiles on 2 workers while a thread SIGKILLs workers every 50 ms.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/chrono.hpp>
#include <boost/thread/thread.hpp>

#include <atomic>
#include <random>

#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "support/files/unique_fd.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

/// SIGKILLs `pid` only if it is still our hipacm-worker child: the pidfd pins
/// the process, so a recycled pid is never hit.
bool kill_worker(pid_t pid) {
  backend::UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return false;
  const auto info = read_proc(pid);
  if (!info || info->ppid != getpid() || info->comm != "hipacm-worker" || info->state == 'Z') {
    return false;
  }
  return syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) == 0;
}

TEST(WorkerStress, ThousandCompilesWhileWorkersAreKilled) {
  // TIMING FAKE: the transport is under test here, not hipRTC; a real compile
  // is ~0.15 s, which would make 1,000 of them take minutes on 2 cores. The
  // echoed source is a real code object, so each reply passes the host's check.
  const backend::CompileRequest request = echo_request();
  FaultScope echo("echo=3");
  const int fds_before = open_fd_count();
  backend::WorkerCompiler compiler(kWorkerPath, 2, 20000);

  constexpr int kCalls = 1000;
  std::atomic<int> next{0}, ok{0}, crashed{0}, other{0}, kills{0};
  std::atomic<bool> done{false};
  boost::thread killer([&] {
    std::mt19937 rng(7);
    while (!done.load(std::memory_order_acquire)) {
      boost::this_thread::sleep_for(boost::chrono::milliseconds(50));
      const std::vector<pid_t> pids = worker_children(false);
      if (!pids.empty() && kill_worker(pids[rng() % pids.size()])) {
        kills.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  boost::thread_group callers;
  for (int t = 0; t < 2; ++t) {
    callers.create_thread([&] {
      for (int i; (i = next.fetch_add(1, std::memory_order_relaxed)) < kCalls;) {
        const backend::CompileResult r = compiler.compile(request);
        if (r.status == HIPACM_SUCCESS) {
          ok.fetch_add(1, std::memory_order_relaxed);
        } else if (r.status == HIPACM_ERROR_COMPILER_CRASHED) {
          EXPECT_NE(r.error_message.find("signal 9 (Killed)"), std::string::npos)
              << r.error_message;
          crashed.fetch_add(1, std::memory_order_relaxed);
        } else {
          ADD_FAILURE() << hipacm_status(r.status) << ": " << r.error_message;
          other.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  callers.join_all();
  done.store(true, std::memory_order_release);
  killer.join();

  std::printf("[stress] %d ok, %d crashed, %d killed workers\n", ok.load(), crashed.load(),
              kills.load());
  EXPECT_EQ(ok + crashed, kCalls);
  EXPECT_EQ(other, 0);
  EXPECT_GT(kills, 0);
  EXPECT_GT(ok, kCalls / 2);
  // A worker killed while idle stays a zombie until the pool next looks at it
  // (checkout, retirement or shutdown), so at most the idle ones can be.
  EXPECT_LE(zombie_children(), static_cast<int>(backend::WorkerPool::instance().idle_count()));

  backend::WorkerPool::instance().shutdown();
  EXPECT_TRUE(worker_children().empty()) << "hipacm-worker children remain after shutdown";
  EXPECT_EQ(zombie_children(), 0);
  EXPECT_EQ(open_fd_count(), fds_before) << "descriptors leaked";
  EXPECT_EQ(backend::WorkerFdRegistry::size(), 0u);
}

}  // namespace
}  // namespace hipacm::test
