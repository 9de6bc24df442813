// SPDX-License-Identifier: MIT
// machine_budget_test.cpp - the machine-wide worker budget: slots shared by processes, freed by a
// killed holder, refused in unsafe directories, and obeyed by worker pools in several processes.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hip_backend/dispatch/compile_dispatch.h"
#include "hip_backend/machine/machine_budget.h"
#include "hip_backend/pool/worker_compiler.h"
#include "hip_backend/pool/worker_pool.h"
#include "support/log.h"
#include "tests/hip_backend/machine/slot_holder.h"
#include "tests/hip_backend/worker_test_support.h"

namespace hipacm::test {
namespace {

namespace fs = std::filesystem;
using backend::MachineBudget;
using backend::MachineBudgetConfig;
using backend::MachineSlot;

/// Waits for `future` long enough that only a hang can miss it (not a timing assertion).
template <class T>
bool finishes(std::future<T>& future) {
  return future.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
}

TEST(MachineBudget, SlotsAreExclusiveAndAWaiterTakesTheFreedOne) {
  TempDir dir("hipacm-budget-");
  MachineBudget budget(config_for(dir.path(), 2));
  ASSERT_EQ(budget.limit(), 2u) << budget.disabled_reason();
  MachineSlot a = budget.acquire();
  MachineSlot b = budget.acquire();
  ASSERT_TRUE(a.held());
  ASSERT_TRUE(b.held());
  EXPECT_NE(a.index(), b.index());
  EXPECT_EQ(budget.slots_in_use(), 2u);

  std::atomic<bool> got{false};
  auto waiter = std::async(std::launch::async, [&] {
    MachineSlot c = budget.acquire();
    got.store(true);
    return c.index();
  });
  // The waiter cannot have a slot while both are held.
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  EXPECT_FALSE(got.load());
  const std::int64_t freed = a.index();
  a = MachineSlot();
  ASSERT_TRUE(finishes(waiter));
  EXPECT_EQ(waiter.get(), freed);
  EXPECT_EQ(budget.slots_in_use(), 1u);  // the waiter's slot went with it
}

// A release wakes waiters through the FIFO. A waiter that got its slot another way closes its end
// at any moment; a release that then writes into a FIFO nobody reads must not raise SIGPIPE, whose
// default action would kill the host. Many short holds with waiters coming and going, SIGPIPE at
// its default action.
TEST(MachineBudget, ReleasesNeverRaiseSigpipeWhileWaitersComeAndGo) {
  TempDir dir("hipacm-budget-");
  const MachineBudgetConfig config = config_for(dir.path(), 1);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
    MachineBudget budget(config);
    if (budget.limit() != 1) ::_exit(3);
    std::vector<std::thread> threads;
    std::atomic<int> held{0}, overlaps{0};
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 1500; ++i) {
          MachineSlot slot = budget.acquire();
          if (held.fetch_add(1) != 0) overlaps.fetch_add(1);
          held.fetch_sub(1);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ::_exit(overlaps.load() == 0 ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: no budget, 4: two holders at once";
}

TEST(MachineBudget, AKilledHolderFreesItsSlot) {
  TempDir dir("hipacm-budget-");
  const MachineBudgetConfig config = config_for(dir.path(), 1);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MachineBudget mine(config);
    MachineSlot slot = mine.acquire();
    const char byte = slot.held() ? 'y' : 'n';
    [[maybe_unused]] const ssize_t n = ::write(ready[1], &byte, 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(byte, 'y');

  MachineBudget budget(config);
  EXPECT_EQ(budget.slots_in_use(), 1u);
  auto waiter = std::async(std::launch::async, [&] { return budget.acquire().held(); });
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  // No wake-up byte comes from a killed holder: the waiter's slow poll finds the slot.
  ASSERT_TRUE(finishes(waiter));
  EXPECT_TRUE(waiter.get());
}

TEST(MachineBudget, NoLimitGivesEmptySlotsAtOnce) {
  TempDir dir("hipacm-budget-");
  MachineBudget budget(config_for(dir.path(), 0));
  EXPECT_EQ(budget.limit(), 0u);
  EXPECT_TRUE(budget.disabled_reason().empty());
  EXPECT_FALSE(budget.acquire().held());
  EXPECT_FALSE(budget.slots_in_use().has_value());
  EXPECT_FALSE(fs::exists(dir.path() + "/run"));  // nothing is created for no budget
}

TEST(MachineBudget, UnsafeDirectoriesTurnTheBudgetOffAndSayWhy) {
  TempDir dir("hipacm-budget-");
  const std::string shared = dir.path() + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  MachineBudgetConfig config;
  config.limit = 4;
  config.runtime_dir = shared;
  MachineBudget world_writable(config);
  EXPECT_EQ(world_writable.limit(), 0u);
  EXPECT_NE(world_writable.disabled_reason().find("writable by other users"), std::string::npos)
      << world_writable.disabled_reason();
  EXPECT_FALSE(world_writable.acquire().held());

  const std::string link = dir.path() + "/link";
  ASSERT_EQ(::mkdir((dir.path() + "/real").c_str(), 0700), 0);
  ASSERT_EQ(::symlink((dir.path() + "/real").c_str(), link.c_str()), 0);
  config.runtime_dir = link;
  MachineBudget through_link(config);
  EXPECT_EQ(through_link.limit(), 0u);
  EXPECT_NE(through_link.disabled_reason().find("not a directory"), std::string::npos)
      << through_link.disabled_reason();

  config.runtime_dir = "relative/dir";
  MachineBudget relative(config);
  EXPECT_EQ(relative.limit(), 0u);
  EXPECT_NE(relative.disabled_reason().find("absolute"), std::string::npos);

  if (::geteuid() == 0) {
    const std::string foreign = dir.path() + "/foreign";
    ASSERT_EQ(::mkdir(foreign.c_str(), 0700), 0);
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
    config.runtime_dir = foreign;
    MachineBudget other_user(config);
    EXPECT_EQ(other_user.limit(), 0u);
    EXPECT_NE(other_user.disabled_reason().find("another user"), std::string::npos)
        << other_user.disabled_reason();
  }
}

TEST(MachineBudget, ASlotFileThatIsALinkIsRefused) {
  TempDir dir("hipacm-budget-");
  const std::string run = dir.path() + "/run";
  ASSERT_EQ(::mkdir(run.c_str(), 0700), 0);
  const std::string target = dir.path() + "/elsewhere";
  ASSERT_EQ(::symlink(target.c_str(), (run + "/worker-slots").c_str()), 0);
  MachineBudget budget(config_for(dir.path(), 2));
  EXPECT_EQ(budget.limit(), 0u);
  EXPECT_NE(budget.disabled_reason().find("worker-slots"), std::string::npos);
  EXPECT_FALSE(fs::exists(target));  // nothing was created through the link
}

TEST(MachineBudget, EnvironmentNamesTheLimitAndTheDirectory) {
  TempDir dir("hipacm-budget-");
  {
    ScopedEnv jobs("HIPACM_MACHINE_JOBS", "3");
    ScopedEnv where("HIPACM_RUNTIME_DIR", dir.path());
    std::string warning;
    const MachineBudgetConfig config = MachineBudgetConfig::from_environment(&warning);
    EXPECT_EQ(config.limit, 3u);
    EXPECT_EQ(config.runtime_dir, dir.path());
    EXPECT_TRUE(warning.empty());
  }
  for (const char* off : {"off", "0"}) {
    ScopedEnv jobs("HIPACM_MACHINE_JOBS", std::string(off));
    EXPECT_EQ(MachineBudgetConfig::from_environment(nullptr).limit, 0u) << off;
  }
  const unsigned cpus = static_cast<unsigned>(::sysconf(_SC_NPROCESSORS_ONLN));
  for (const char* bad : {"many", "-2", "4x", "99999999999999999999"}) {
    ScopedEnv jobs("HIPACM_MACHINE_JOBS", std::string(bad));
    std::string warning;
    const MachineBudgetConfig config = MachineBudgetConfig::from_environment(&warning);
    EXPECT_EQ(config.limit, cpus) << bad;
    EXPECT_NE(warning.find("HIPACM_MACHINE_JOBS"), std::string::npos) << bad;
  }
  {
    ScopedEnv jobs("HIPACM_MACHINE_JOBS", std::nullopt);
    ScopedEnv where("HIPACM_RUNTIME_DIR", std::nullopt);
    ScopedEnv xdg("XDG_RUNTIME_DIR", dir.path());
    const MachineBudgetConfig config = MachineBudgetConfig::from_environment(nullptr);
    EXPECT_EQ(config.limit, cpus);
    EXPECT_EQ(config.runtime_dir, dir.path() + "/hipacm");
  }
  {
    ScopedEnv where("HIPACM_RUNTIME_DIR", std::nullopt);
    ScopedEnv xdg("XDG_RUNTIME_DIR", std::nullopt);
    EXPECT_EQ(MachineBudgetConfig::from_environment(nullptr).runtime_dir,
              "/tmp/hipacm-" + std::to_string(::geteuid()));
  }
}

// --- worker pools in several processes ---------------------------------------------------------

double monotonic_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // one clock for every process on the machine
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

/// The most intervals that overlap at any moment.
int peak_overlap(std::vector<std::pair<double, double>> intervals) {
  std::vector<std::pair<double, int>> events;
  for (const auto& [start, end] : intervals) {
    events.emplace_back(start, +1);
    events.emplace_back(end, -1);
  }
  std::sort(events.begin(), events.end());  // at a tie, an end (-1) sorts first
  int now = 0, peak = 0;
  for (const auto& event : events) peak = std::max(peak, now += event.second);
  return peak;
}

constexpr int kProcesses = 3;
constexpr unsigned kThreadsEach = 2;
constexpr int kCompilesEach = 3;

/// Runs kProcesses children, each compiling kCompilesEach times on each of kThreadsEach threads
/// through its own worker pool, and returns every compile's [start, end] as the workers saw them
/// busy. The echo fault makes each compile a 250 ms sleep in the worker.
std::vector<std::pair<double, double>> compile_in_processes() {
  const backend::CompileRequest request = echo_request();  // compiled before any fork
  ScopedEnv enable("HIPACM_TEST_HOOKS", "1");
  ScopedEnv fault("HIPACM_WORKER_FAULT", "echo=250");
  int results[2];
  EXPECT_EQ(::pipe(results), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(results[0]);
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < kThreadsEach; ++t) {
        threads.emplace_back([&] {
          for (int i = 0; i < kCompilesEach; ++i) {
            auto lease = backend::WorkerPool::instance().checkout(kWorkerPath, kThreadsEach);
            if (!lease) _exit(3);
            const double start = monotonic_seconds();
            const backend::CompileResult result = lease->compile(request, 60000);
            const double end = monotonic_seconds();
            if (result.status != HIPACM_SUCCESS) _exit(4);
            const double interval[2] = {start, end};
            // A pipe write of at most PIPE_BUF bytes is atomic.
            if (::write(results[1], interval, sizeof interval) != sizeof interval) _exit(5);
          }
        });
      }
      for (auto& thread : threads) thread.join();
      backend::WorkerPool::instance().shutdown();
      _exit(0);
    }
    children.push_back(child);
  }
  ::close(results[1]);
  std::vector<std::pair<double, double>> intervals;
  double interval[2];
  while (::read(results[0], interval, sizeof interval) == sizeof interval) {
    intervals.emplace_back(interval[0], interval[1]);
  }
  ::close(results[0]);
  for (const pid_t child : children) {
    int status = -1;
    EXPECT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  return intervals;
}

TEST(MachineBudgetPools, ProcessesTogetherNeverCompileMoreThanTheBudget) {
  TempDir dir("hipacm-budget-");
  ScopedEnv jobs("HIPACM_MACHINE_JOBS", "2");
  ScopedEnv where("HIPACM_RUNTIME_DIR", dir.path());
  const auto intervals = compile_in_processes();
  ASSERT_EQ(intervals.size(), static_cast<std::size_t>(kProcesses * kThreadsEach * kCompilesEach));
  // Six threads want to compile at once; two slots let two of them.
  EXPECT_EQ(peak_overlap(intervals), 2);
}

TEST(MachineBudgetPools, WithoutTheBudgetTheSameProcessesCompileTogether) {
  // The control: the measurement above sees more than two when nothing limits the pools.
  ScopedEnv jobs("HIPACM_MACHINE_JOBS", "off");
  const auto intervals = compile_in_processes();
  ASSERT_EQ(intervals.size(), static_cast<std::size_t>(kProcesses * kThreadsEach * kCompilesEach));
  EXPECT_GT(peak_overlap(intervals), 2);
}

// --- compiles in the host process --------------------------------------------------------------

/// This process's own budget, at one slot, in `dir`/run for a scope.
class OwnOneSlotBudget {
 public:
  explicit OwnOneSlotBudget(const std::string& dir)
      : slot_file_(dir + "/run/worker-slots"),
        jobs_("HIPACM_MACHINE_JOBS", "1"),
        where_("HIPACM_RUNTIME_DIR", dir + "/run") {}
  /// False when the budget was set up before the test (once a process): the test then skips.
  bool in_effect() const { return MachineBudget::instance().slot_file() == slot_file_; }

 private:
  std::string slot_file_;
  ScopedEnv jobs_, where_;
};

constexpr const char* kRunAlone =
    "this process's budget was set up before this test; run it alone, as ctest does";

TEST(MachineBudgetInProcess, AHostCompileWaitsForASlotLikeAWorkerAndGivesItBack) {
  TempDir dir("hipacm-budget-");
  const OwnOneSlotBudget own(dir.path());
  if (!own.in_effect()) GTEST_SKIP() << kRunAlone;
  // Another process of the user, as far as the slot file is concerned, holds the only slot.
  MachineBudget other(config_for(dir.path(), 1));
  MachineSlot held = other.acquire();
  ASSERT_TRUE(held.held()) << other.disabled_reason();

  backend::InProcessCompiler compiler;
  auto compile = std::async(std::launch::async,
                            [&] { return compiler.compile(make_request(kernel_source(3))); });
  EXPECT_EQ(compile.wait_for(std::chrono::seconds(1)), std::future_status::timeout)
      << "a compile in the host ran while the budget's only slot was held elsewhere";
  held = MachineSlot();
  ASSERT_TRUE(finishes(compile));
  expect_gfx90a_kernel(compile.get(), "k3");
  EXPECT_EQ(other.slots_in_use(), 0u) << "the compile gave its slot back";
}

// --- a stopped or busy holder (issue 27, item 6) ----------------------------------------------

TEST(Trust2_06_BusyHolder, ATimeoutCoversTheWaitAndEndsItWithTimeout) {
  HeldSlot held(/*stopped=*/false, std::chrono::minutes(10));  // only the deadline may end it
  ASSERT_TRUE(held.holder.ready());
  auto waited = std::async(std::launch::async, [&] {
    return held.budget.acquire(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  });
  ASSERT_TRUE(held.holder.outwaited_by(waited)) << "a holder stalled a wait with a 2 s deadline";
  const MachineSlot slot = waited.get();
  EXPECT_FALSE(slot.held());
  EXPECT_TRUE(slot.timed_out());
  EXPECT_FALSE(slot.over_budget());
  EXPECT_NE(slot.wait_reason().find("pid " + std::to_string(held.holder.pid())), std::string::npos)
      << slot.wait_reason();
  EXPECT_EQ(slot.wait_reason().find("(stopped)"), std::string::npos) << slot.wait_reason();
  const std::string message = backend::slot_wait_timeout_message("k.hip", slot.waited(), slot);
  EXPECT_NE(message.find("waiting for a machine-wide compile slot"), std::string::npos) << message;
}

TEST(Trust2_06_BusyHolder, WithoutATimeoutTheWaitIsBoundedAndTheCompileGoesOverBudget) {
  HeldSlot held(/*stopped=*/false, std::chrono::milliseconds(1500));
  ASSERT_TRUE(held.holder.ready());
  MachineSlot slot;
  ASSERT_NO_FATAL_FAILURE(
      held.expect_wait_goes_over_budget("a holder stalled a wait without a timeout", &slot));
  EXPECT_GE(slot.waited(), std::chrono::milliseconds(1500)) << "it went over before its bound";
  EXPECT_NE(held.log.find("compiling over the budget"), "");
  EXPECT_EQ(held.budget.slots_in_use(), 1u) << "the holder keeps its slot; nothing else held";
}

TEST(Trust2_06_BusyHolder, AWaiterSaysWhatItWaitsForAndForWhom) {
  HeldSlot held(/*stopped=*/false);
  ASSERT_TRUE(held.holder.ready());
  auto waited = std::async(std::launch::async, [&] {
    return held.budget.acquire(std::chrono::steady_clock::now() + std::chrono::milliseconds(2500));
  });
  ASSERT_TRUE(held.holder.outwaited_by(waited));
  EXPECT_TRUE(waited.get().timed_out());
  const std::string line = held.log.find("waiting for a machine-wide compile slot");
  EXPECT_NE(line, "") << "nothing said why the compile waited";
  EXPECT_NE(line.find("pid " + std::to_string(held.holder.pid())), std::string::npos) << line;
}

// A stopped holder runs nothing: a waiter goes over the budget at once instead of waiting for a
// slot that may not come back for hours (each compile of a host used to stall behind it).
TEST(Trust2_06_StoppedHolder, IsNotWaitedForAndIsNamed) {
  // Only the stopped-holder rule may end a wait early.
  HeldSlot held(/*stopped=*/true, std::chrono::minutes(10));
  ASSERT_TRUE(held.holder.ready());
  for (int i = 0; i < 3; ++i) {
    MachineSlot slot;
    ASSERT_NO_FATAL_FAILURE(
        held.expect_wait_goes_over_budget("a stopped holder stalled a wait", &slot));
    EXPECT_LT(slot.waited(), std::chrono::seconds(20)) << "it waited for the stopped holder";
    EXPECT_NE(slot.wait_reason().find("pid " + std::to_string(held.holder.pid()) + " (stopped)"),
              std::string::npos)
        << slot.wait_reason();
  }
  EXPECT_NE(held.log.find("held by a stopped process"), "") << "nothing said why it went over";
  EXPECT_EQ(held.budget.slots_in_use(), 1u)
      << "the stopped holder keeps its slot; nothing else held";
}

// The same through the compilers a mode uses, with the process's own budget (one slot).
TEST(Trust2_06_BusyHolder, CompilesWithATimeoutEndTimeoutInWorkersAndInTheHost) {
  TempDir dir("hipacm-budget-");
  const OwnOneSlotBudget own(dir.path());
  if (!own.in_effect()) GTEST_SKIP() << kRunAlone;
  SlotHolder holder(dir.path(), /*stop=*/false);
  ASSERT_TRUE(holder.ready());
  backend::WorkerCompiler workers(kWorkerPath, 1, 2000);
  backend::InProcessCompiler in_host(2000);
  for (backend::Compiler* compiler :
       {static_cast<backend::Compiler*>(&workers), static_cast<backend::Compiler*>(&in_host)}) {
    auto compile = std::async(std::launch::async,
                              [&] { return compiler->compile(make_request(kernel_source(4))); });
    ASSERT_TRUE(holder.outwaited_by(compile)) << "a holder stalled a compile with a 2 s timeout";
    const backend::CompileResult result = compile.get();
    EXPECT_EQ(result.status, HIPACM_ERROR_TIMEOUT) << result.error_message;
    EXPECT_NE(result.error_message.find("machine-wide compile slot"), std::string::npos)
        << result.error_message;
  }
}

// A wait for a slot that ends in time is still part of the compile's limit: the worker gets what
// is left, and its timeout names the whole limit and the wait (it used to name only the rest,
// "timed out after 106 ms" for a 300 ms limit).
TEST(Trust2_06_BusyHolder, AWorkerTimeoutAfterAWaitNamesTheWholeLimitAndTheWait) {
  TempDir dir("hipacm-budget-");
  const OwnOneSlotBudget own(dir.path());
  if (!own.in_effect()) GTEST_SKIP() << kRunAlone;
  FaultScope hang("hang:when=@HANG@");
  SlotHolder holder(dir.path(), /*stop=*/false);
  ASSERT_TRUE(holder.ready());
  backend::WorkerCompiler workers(kWorkerPath, 1, 4000);
  auto compile =
      std::async(std::launch::async, [&] { return workers.compile(make_request("@HANG@")); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  holder.end();  // its slot frees: the compile takes it with about 3 s of its limit left
  ASSERT_TRUE(finishes(compile));
  const backend::CompileResult result = compile.get();
  EXPECT_EQ(result.status, HIPACM_ERROR_TIMEOUT) << result.error_message;
  const std::string head = "timed out after 4000 ms (";
  const std::size_t at = result.error_message.find(head);
  ASSERT_NE(at, std::string::npos) << result.error_message;
  EXPECT_NE(result.error_message.find(" ms of it waiting for a machine-wide compile slot)", at),
            std::string::npos)
      << result.error_message;
  // The slot could not be taken before the holder ended, a second after the compile began.
  EXPECT_GE(std::stoul(result.error_message.substr(at + head.size())), 1000u)
      << result.error_message;
}

}  // namespace
}  // namespace hipacm::test
