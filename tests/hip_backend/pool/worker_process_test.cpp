// SPDX-License-Identifier: MIT
// worker_process_test.cpp - one hipacm-worker: spawn, descriptors, stderr, reaping, parent death.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/chrono.hpp>
#include <boost/thread/thread.hpp>

#include <climits>
#include <cstdio>
#include <map>
#include <set>

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_process.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "support/files/unique_fd.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

using backend::UniqueFd;
using backend::WorkerProcess;

std::unique_ptr<WorkerProcess> spawn_worker() {
  auto worker = WorkerProcess::spawn(kWorkerPath);
  EXPECT_TRUE(worker) << worker.failure().message;
  return worker ? std::move(worker).value() : nullptr;
}

/// The targets of /proc/<pid>/fd/*, keyed by descriptor.
std::map<int, std::string> fd_targets(pid_t pid) {
  std::map<int, std::string> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[PATH_MAX] = {};
    const std::string link = dir + "/" + e->d_name;
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    out[std::atoi(e->d_name)] = n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "?";
  }
  closedir(d);
  return out;
}

TEST(WorkerProcess, CompilesARealKernelAndExitsOnEof) {
  auto worker = spawn_worker();
  ASSERT_TRUE(worker);
  const pid_t pid = worker->pid();
  const backend::CompileResult result = worker->compile(make_request(kernel_source(1)), 60000);
  ASSERT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  const auto checked = backend::check_amdgpu_code_object(result.code, kArch, {"k1"});
  EXPECT_TRUE(checked) << checked.failure().message;
  EXPECT_GT(result.compile_seconds, 0.0);
  EXPECT_TRUE(worker->usable());

  // Closing the socket is the worker's cue to exit 0: well inside the grace
  // period, so no SIGKILL was needed, and it is reaped (not even a zombie).
  const auto start = boost::chrono::steady_clock::now();
  worker.reset();
  const auto took = boost::chrono::steady_clock::now() - start;
  EXPECT_LT(took, boost::chrono::milliseconds(WorkerProcess::kGracefulExitMs));
  EXPECT_FALSE(read_proc(pid).has_value());
  EXPECT_EQ(backend::WorkerFdRegistry::size(), 0u);
}

TEST(WorkerProcess, InheritsNoStrayDescriptors) {
  FaultScope echo("echo");
  // Descriptors a careless host leaves inheritable: a file and a pipe.
  UniqueFd stray_file(open("/dev/zero", O_RDONLY));  // deliberately without O_CLOEXEC
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  UniqueFd stray_read(p[0]), stray_write(p[1]);
  ASSERT_TRUE(stray_file);

  auto worker = spawn_worker();
  ASSERT_TRUE(worker);
  // One echo round trip: the worker is now idle in read(), past its start-up.
  ASSERT_EQ(worker->compile(make_request("x"), 20000).status, HIPACM_SUCCESS);
  const auto fds = fd_targets(worker->pid());
  std::set<int> numbers;
  for (const auto& [fd, target] : fds) numbers.insert(fd);
  EXPECT_EQ(numbers, (std::set<int>{0, 1, 2, 3})) << "worker descriptors: " << [&] {
    std::string all;
    for (const auto& [fd, target] : fds) all += std::to_string(fd) + "->" + target + " ";
    return all;
  }();
  EXPECT_EQ(fds.at(0), "/dev/null");
  EXPECT_EQ(fds.at(1).rfind("pipe:", 0), 0u) << fds.at(1);
  EXPECT_EQ(fds.at(2), fds.at(1));
  EXPECT_EQ(fds.at(3).rfind("socket:", 0), 0u) << fds.at(3);
}

TEST(WorkerProcess, MissingBinaryFailsWithoutLeaking) {
  const int fds_before = open_fd_count();
  auto worker = WorkerProcess::spawn("/nonexistent/dir/hipacm-worker");
  EXPECT_FALSE(worker);
  const std::string error = worker ? std::string() : worker.failure().message;
  EXPECT_NE(error.find("/nonexistent/dir/hipacm-worker"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_EQ(open_fd_count(), fds_before);
  EXPECT_EQ(backend::WorkerFdRegistry::size(), 0u);
  EXPECT_EQ(zombie_children(), 0);
}

TEST(WorkerProcess, ChattyWorkerCannotBlockOnAFullPipe) {
  // 1 MB of stderr against a 64 KiB pipe: the host drains while it waits.
  FaultScope spam("spam=1000000");
  auto worker = spawn_worker();
  ASSERT_TRUE(worker);
  const backend::CompileResult result = worker->compile(make_request("x"), 20000);
  EXPECT_EQ(result.status, HIPACM_SUCCESS) << result.error_message;
  EXPECT_EQ(worker->stderr_tail().size(), WorkerProcess::kStderrTailBytes);
  EXPECT_NE(worker->stderr_tail().find("spam spam"), std::string::npos);
}

TEST(WorkerProcess, IdleProbeNoticesADeadWorker) {
  FaultScope echo("echo");
  auto worker = spawn_worker();
  ASSERT_TRUE(worker);
  ASSERT_EQ(worker->compile(make_request("x"), 20000).status, HIPACM_SUCCESS);
  EXPECT_TRUE(worker->probe_idle());
  const pid_t pid = worker->pid();
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_TRUE(wait_until(
      [&] {
        const auto info = read_proc(pid);
        return info && info->state == 'Z';
      },
      5000));
  EXPECT_FALSE(worker->probe_idle());
  EXPECT_FALSE(worker->usable());
  worker.reset();
  EXPECT_FALSE(read_proc(pid).has_value()) << "the dead worker was not reaped";
}

TEST(WorkerProcess, ResultOfADeadWorkerNamesTheSignal) {
  FaultScope echo("echo");
  auto worker = spawn_worker();
  ASSERT_TRUE(worker);
  ASSERT_EQ(kill(worker->pid(), SIGTERM), 0);
  const backend::CompileResult result = worker->compile(make_request("x"), 20000);
  EXPECT_EQ(result.status, HIPACM_ERROR_COMPILER_CRASHED);
  EXPECT_NE(result.error_message.find("signal 15 (Terminated)"), std::string::npos)
      << result.error_message;
  EXPECT_NE(result.error_message.find("pid " + std::to_string(worker->pid())), std::string::npos);
}

// Linux sends the parent-death signal when the *thread* that spawned a child
// exits. Mode pools spawn workers from threads that are joined at mode exit,
// so a worker must survive that and die only with the host process.
TEST(WorkerProcess, SurvivesTheExitOfTheThreadThatSpawnedIt) {
  const backend::CompileRequest request = echo_request();
  FaultScope echo("echo");
  backend::WorkerCompiler compiler(kWorkerPath, 1, 20000);
  boost::thread spawner([&] { EXPECT_EQ(compiler.compile(request).status, HIPACM_SUCCESS); });
  spawner.join();
  const auto before = worker_children(false);
  ASSERT_EQ(before.size(), 1u);
  boost::this_thread::sleep_for(boost::chrono::milliseconds(300));
  EXPECT_EQ(compiler.compile(request).status, HIPACM_SUCCESS);
  EXPECT_EQ(worker_children(false), before) << "the worker died with its spawning thread";
}

TEST(WorkerProcess, DiesWithItsHostEvenWhenBusy) {
  // A stand-in host (a forked child) spawns a worker, makes it hang in a
  // compile (so it is not reading, and EOF cannot reach it), then is killed.
  // A real compile comes first: hipRTC's LLVM may install signal handlers.
  FaultScope hang("hang:when=@HANG@");
  int report[2];
  ASSERT_EQ(pipe2(report, O_CLOEXEC), 0);
  UniqueFd report_read(report[0]), report_write(report[1]);
  const pid_t host = fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    auto spawned = WorkerProcess::spawn(kWorkerPath);
    std::unique_ptr<WorkerProcess> worker = spawned ? std::move(spawned).value() : nullptr;
    const pid_t pid = worker ? worker->pid() : 0;
    if (write(report_write.get(), &pid, sizeof pid) != sizeof pid) _exit(2);
    if (worker && worker->compile(make_request(kernel_source(1)), 0).status != HIPACM_SUCCESS) {
      _exit(4);
    }
    if (write(report_write.get(), &pid, sizeof pid) != sizeof pid) _exit(2);
    if (worker) worker->compile(make_request("@HANG@"), 0);  // hangs until we are killed
    _exit(3);
  }
  report_write.reset();
  pid_t worker_pid = 0, compiled = 0;
  ASSERT_EQ(read(report_read.get(), &worker_pid, sizeof worker_pid),
            static_cast<ssize_t>(sizeof worker_pid));
  ASSERT_GT(worker_pid, 0);
  ASSERT_EQ(read(report_read.get(), &compiled, sizeof compiled),
            static_cast<ssize_t>(sizeof compiled))
      << "the real compile in the stand-in host failed";
  // Let the request arrive, so the worker is inside the hang.
  boost::this_thread::sleep_for(boost::chrono::milliseconds(300));
  ASSERT_EQ(kill(host, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(host, &status, 0), host);
  // Reparented to init (or a subreaper), it must exit at once.
  const bool gone = wait_until(
      [&] {
        auto info = read_proc(worker_pid);
        return !info || info->state == 'Z' || info->comm != "hipacm-worker";
      },
      5000);
  if (!gone) kill(worker_pid, SIGKILL);
  EXPECT_TRUE(gone) << "hipacm-worker " << worker_pid << " outlived its host";
}

}  // namespace
}  // namespace hipacm::test
