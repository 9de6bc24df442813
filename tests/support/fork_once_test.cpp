// SPDX-License-Identifier: MIT
// fork_once_test.cpp - one-time initialisation across fork(): a child forked while another thread
// is inside an initialiser runs it itself instead of waiting for a thread that is not there.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <atomic>
#include <csignal>
#include <stdexcept>
#include <thread>

#include "support/fork_epoch.h"

namespace hipacm {
namespace {

// Forks while `hold` keeps a thread inside an initialiser, then has the child run `in_child`
// under alarm(): a hang there is a SIGALRM, a wrong answer exit 1.
template <class Hold, class InChild>
void fork_while_held(std::atomic<bool>& inside, std::atomic<bool>& release, Hold hold,
                     InChild in_child) {
  std::thread holder(hold);
  while (!inside.load()) std::this_thread::yield();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(20);
    ::_exit(in_child() ? 0 : 1);
  }
  release.store(true);
  holder.join();
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) << "the child hung";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST(ForkSafeOnce, AChildRunsTheInitialiserThatAParentThreadWasInside) {
  static ForkSafeOnce once;
  static std::atomic<int> runs{0};
  std::atomic<bool> inside{false}, release{false};
  fork_while_held(
      inside, release,
      [&] {
        once.call([&] {
          inside.store(true);
          while (!release.load()) std::this_thread::yield();
          runs.fetch_add(1);
        });
      },
      [] {
        once.call([] { runs.fetch_add(1); });
        once.call([] { runs.fetch_add(100); });  // done now: never again
        return runs.load() == 1;
      });
  EXPECT_EQ(runs.load(), 1) << "the parent ran it once";
  once.call([] { runs.fetch_add(100); });
  EXPECT_EQ(runs.load(), 1);
}

TEST(ForkSafeOnce, AThrowingInitialiserCanBeRunAgain) {
  ForkSafeOnce once;
  EXPECT_THROW(once.call([] { throw std::runtime_error("no"); }), std::runtime_error);
  int runs = 0;
  once.call([&] { ++runs; });
  once.call([&] { ++runs; });
  EXPECT_EQ(runs, 1);
}

// The fork-guarded singleton whose constructor a parent thread is inside at the fork.
thread_local bool t_block_in_constructor = false;
std::atomic<bool> g_inside{false}, g_release{false};

struct SlowToBuild {
  SlowToBuild() {
    if (!t_block_in_constructor) return;
    g_inside.store(true);
    while (!g_release.load()) std::this_thread::yield();
  }
  boost::mutex mutex;
  int value = 42;
};

TEST(ForkGuarded, AChildBuildsItsOwnWhenAParentThreadWasBuildingIt) {
  using Guarded = ForkGuarded<SlowToBuild, ForkRank::kCacheRegistry>;
  fork_while_held(
      g_inside, g_release,
      [] {
        t_block_in_constructor = true;
        Guarded::instance();
      },
      [] {
        SlowToBuild& built = Guarded::instance();
        const boost::lock_guard<boost::mutex> lock(built.mutex);
        return built.value == 42;
      });
  EXPECT_EQ(Guarded::instance().value, 42);
}

}  // namespace
}  // namespace hipacm
