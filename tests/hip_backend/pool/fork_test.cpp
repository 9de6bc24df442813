// SPDX-License-Identifier: MIT
// fork_test.cpp - a fork()ed child forgets the parent's workers and spawns its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "support/files/unique_fd.h"
#include "tests/child_report.h"
#include "tests/hip_backend/worker_test_support.h"

#if defined(__SANITIZE_THREAD__)
// The child's pool starts its idle reaper thread after a multithreaded
// fork(); TSan would otherwise abort the child for creating a thread there.
extern "C" __attribute__((visibility("default"))) const char* __tsan_default_options() {
  return "die_after_fork=0";
}
#endif

namespace hipacm::test {
namespace {

using backend::CompileResult;
using backend::WorkerCompiler;

/// Runs in the forked child; returns "" on success, else what went wrong.
std::string child_checks(const std::vector<pid_t>& parent_workers, int fds_at_fork) {
  // The parent's three descriptors per worker are closed; none is registered.
  if (backend::WorkerFdRegistry::size() != 0) return "registry not emptied";
  const int expected = fds_at_fork - 3 * static_cast<int>(parent_workers.size());
  if (open_fd_count() != expected) {
    return "child has " + std::to_string(open_fd_count()) + " fds, expected " +
           std::to_string(expected);
  }
  if (backend::WorkerPool::instance().idle_count() != 0) return "idle workers inherited";
  WorkerCompiler compiler(kWorkerPath, 2, 60000);
  const CompileResult r = compiler.compile(make_request(kernel_source(7)));
  if (r.status != HIPACM_SUCCESS) return "compile failed: " + r.error_message;
  const std::vector<pid_t> mine = worker_children();
  if (mine.size() != 1) return "expected 1 worker child, found " + std::to_string(mine.size());
  if (std::count(parent_workers.begin(), parent_workers.end(), mine[0]) != 0) {
    return "the child reused a parent's worker";
  }
  if (read_proc(mine[0])->ppid != getpid()) return "worker's parent is not the child";
  backend::WorkerPool::instance().shutdown();
  if (!worker_children().empty()) return "worker left after shutdown";
  return "";
}

TEST(WorkerFork, ChildSpawnsItsOwnWorkersAndParentKeepsItsOwn) {
  backend::WorkerPool::instance().shutdown();
  WorkerCompiler compiler(kWorkerPath, 2, 60000);
  // Two warm workers, busy at the same time so that both get spawned.
  boost::thread other(
      [&] { EXPECT_EQ(compiler.compile(make_request(kernel_source(1))).status, HIPACM_SUCCESS); });
  EXPECT_EQ(compiler.compile(make_request(kernel_source(2))).status, HIPACM_SUCCESS);
  other.join();
  std::vector<pid_t> parent_workers = worker_children(false);
  std::sort(parent_workers.begin(), parent_workers.end());
  ASSERT_FALSE(parent_workers.empty());

  ChildReport report;
  ASSERT_TRUE(report.ok());
  const int fds_at_fork = open_fd_count() - 1;  // the child closes the read end first
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    report.close_read_end();
    const std::string problem = child_checks(parent_workers, fds_at_fork);
    (void)!write(report.write_fd(), problem.data(), problem.size());
    _exit(problem.empty() ? 0 : 1);
  }
  const std::string problem = report.read_to_end();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child: " << problem;

  // The parent's workers were neither signalled nor waited for by the child.
  std::vector<pid_t> after = worker_children(false);
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, parent_workers);
  EXPECT_EQ(compiler.compile(make_request(kernel_source(3))).status, HIPACM_SUCCESS);
  after = worker_children(false);
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, parent_workers) << "the parent had to replace a worker after the fork";
  EXPECT_EQ(zombie_children(), 0);
}

}  // namespace
}  // namespace hipacm::test
