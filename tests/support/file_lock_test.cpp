// SPDX-License-Identifier: MIT
// file_lock_test.cpp - FileLock and locked_elsewhere against real files: exclusion between
// processes and threads, byte ranges, bounded and blocking waits, fork, take_fd and borrowing.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/files/file_lock.h"

namespace hipacm::backend {
namespace {

using std::chrono::milliseconds;

int open_fd_count() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (::readdir(dir) != nullptr) ++count;
  ::closedir(dir);
  return count;
}

UniqueFd open_rw(const std::string& path) { return UniqueFd(::open(path.c_str(), O_RDWR)); }

// A child process with its own open file description of `path`, run by one-byte commands over a
// pipe so that the parent decides when it locks, unlocks or dies: 'l' tries the lock once (reply
// 'h' held, 'b' busy, 'e' error), 'u' unlocks, 'g' asks locked_elsewhere ('y', 'n', '?').
class Peer {
 public:
  Peer(const std::string& path, LockKind kind, LockRange range) {
    int command[2], reply[2];
    if (::pipe(command) != 0 || ::pipe(reply) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ < 0) std::abort();
    if (pid_ == 0) serve(path, kind, range, command[0], reply[1]);
    ::close(command[0]);
    ::close(reply[1]);
    command_ = UniqueFd(command[1]);
    reply_ = UniqueFd(reply[0]);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  ~Peer() {
    if (pid_ > 0) {
      const char quit = 'q';
      (void)!::write(command_.get(), &quit, 1);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  char ask(char command) {
    if (::write(command_.get(), &command, 1) != 1) return '!';
    pollfd ready{reply_.get(), POLLIN, 0};
    char answer = '!';
    if (::poll(&ready, 1, 10000) != 1 || ::read(reply_.get(), &answer, 1) != 1) return '!';
    return answer;
  }
  // SIGKILL: the kernel, not the holder, has to drop its lock.
  void kill() {
    ::kill(pid_, SIGKILL);
    ::waitpid(std::exchange(pid_, -1), nullptr, 0);
  }

 private:
  [[noreturn]] static void serve(const std::string& path, LockKind kind, LockRange range,
                                 int command, int reply) {
    ::alarm(30);  // a parent that never says 'q' does not leave this child behind
    // Drop every inherited descriptor (the parent's lock descriptions among them), so that only
    // the parent's own copies keep its locks alive.
    for (int fd = 3; fd < 1024; ++fd) {
      if (fd != command && fd != reply) ::close(fd);
    }
    UniqueFd fd = open_rw(path);
    FileLock lock;
    for (char c; ::read(command, &c, 1) == 1;) {
      char answer = '?';
      if (c == 'l') {
        lock = FileLock::acquire_borrowed(fd.get(), kind, range, LockWait::once());
        answer = lock.held() ? 'h' : lock.busy() ? 'b' : 'e';
      } else if (c == 'u') {
        lock.unlock();
        answer = 'u';
      } else if (c == 'g') {
        const std::optional<bool> elsewhere = locked_elsewhere(fd.get(), range);
        answer = !elsewhere ? '?' : *elsewhere ? 'y' : 'n';
      } else if (c == 'q') {
        break;
      }
      if (::write(reply, &answer, 1) != 1) ::_exit(4);
    }
    ::_exit(0);
  }

  pid_t pid_ = -1;
  UniqueFd command_;
  UniqueFd reply_;
};

// A peer takes the whole file and lets it go after `delay`, while this thread waits for it with
// `wait`: the waits that must outlast a holder. `*lock` is what the wait got.
void acquire_as_the_holder_lets_go(const std::string& path, LockKind kind, milliseconds delay,
                                   LockWait wait, FileLock* lock) {
  Peer holder(path, kind, LockRange::whole_file());
  ASSERT_EQ(holder.ask('l'), 'h');
  std::thread release([&] {
    std::this_thread::sleep_for(delay);
    holder.ask('u');
  });
  *lock = FileLock::acquire(open_rw(path), kind, LockRange::whole_file(), wait);
  release.join();
}

// Waits for a fork()ed child that reports its checks through its exit status.
void expect_child_passed(pid_t child) {
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fds_before_ = open_fd_count();
    std::string pattern = ::testing::TempDir() + "hipacm_file_lock_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
    path_ = dir_ + "/lock";
    UniqueFd fd(::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    ASSERT_TRUE(fd.valid());
    const std::int64_t zero = 0;
    ASSERT_EQ(::pwrite(fd.get(), &zero, sizeof zero, 0), static_cast<ssize_t>(sizeof zero));
  }
  void TearDown() override {
    ::unlink(path_.c_str());
    EXPECT_EQ(::rmdir(dir_.c_str()), 0) << dir_;
    EXPECT_EQ(open_fd_count(), fds_before_) << "a descriptor leaked";
  }

  // Another open file description of the file in this process, tried once.
  FileLock try_other(LockKind kind, LockRange range = LockRange::whole_file()) const {
    return FileLock::acquire(open_rw(path_), kind, range, LockWait::once());
  }

  // Takes the whole file through a description of its own into *lock, forks with it held, and
  // has the child run `in_child` and exit with its verdict, which the parent expects to be true.
  // The child runs under a 30 s watchdog, so that a check of it that hangs ends it, not the test.
  template <class Check>
  void check_in_a_forked_child(LockKind kind, FileLock* lock, Check in_child) const {
    *lock = try_other(kind);
    ASSERT_TRUE(lock->held());
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::alarm(30);
      ::_exit(in_child() ? 0 : 1);
    }
    expect_child_passed(child);
  }

  // Adds one to the counter at the start of the file, read and written a pause apart so that
  // two writers not excluding each other would lose updates.
  static bool increment(int fd) {
    std::int64_t value = 0;
    if (::pread(fd, &value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    ++value;
    return ::pwrite(fd, &value, sizeof value, 0) == static_cast<ssize_t>(sizeof value);
  }
  std::int64_t counter() const {
    UniqueFd fd = open_rw(path_);
    std::int64_t value = -1;
    EXPECT_EQ(::pread(fd.get(), &value, sizeof value, 0), static_cast<ssize_t>(sizeof value));
    return value;
  }

  std::string dir_;
  std::string path_;
  int fds_before_ = 0;
};

class FileLockKinds : public FileLockTest, public ::testing::WithParamInterface<LockKind> {};

std::string kind_name(const ::testing::TestParamInfo<LockKind>& info) {
  return info.param == LockKind::kFlock ? "Flock" : "Ofd";
}

TEST_P(FileLockKinds, AnotherProcessHoldingItMakesOnceBusyUntilItDies) {
  const LockKind kind = GetParam();
  Peer holder(path_, kind, LockRange::whole_file());
  ASSERT_EQ(holder.ask('l'), 'h');
  FileLock busy = try_other(kind);
  EXPECT_FALSE(busy.held());
  EXPECT_FALSE(busy);
  EXPECT_TRUE(busy.busy());
  EXPECT_EQ(busy.error(), 0);
  EXPECT_GE(busy.fd(), 0) << "a lock not had still owns its descriptor";
  busy.unlock();
  EXPECT_EQ(busy.fd(), -1);
  holder.kill();  // never unlocked: the kernel drops it with the last descriptor
  FileLock mine = try_other(kind);
  EXPECT_TRUE(mine.held());
  EXPECT_FALSE(mine.busy());
  EXPECT_EQ(mine.error(), 0);
}

TEST_P(FileLockKinds, TwoDescriptionsInOneProcessExcludeEachOther) {
  FileLock first = try_other(GetParam());
  ASSERT_TRUE(first.held());
  EXPECT_TRUE(try_other(GetParam()).busy());
}

TEST_P(FileLockKinds, UnlockReleasesItForOthers) {
  const LockKind kind = GetParam();
  Peer other(path_, kind, LockRange::whole_file());
  FileLock mine = try_other(kind);
  ASSERT_TRUE(mine.held());
  EXPECT_EQ(other.ask('l'), 'b');
  mine.unlock();
  EXPECT_FALSE(mine.held());
  EXPECT_EQ(mine.fd(), -1) << "unlock closes an owned descriptor";
  EXPECT_EQ(other.ask('l'), 'h');
  EXPECT_TRUE(try_other(kind).busy());
  EXPECT_EQ(other.ask('u'), 'u');
  EXPECT_TRUE(try_other(kind).held());
}

TEST_P(FileLockKinds, UpToSucceedsWhenTheHolderLetsGoMidWait) {
  FileLock lock;
  ASSERT_NO_FATAL_FAILURE(acquire_as_the_holder_lets_go(
      path_, GetParam(), milliseconds(200),
      LockWait::up_to(milliseconds(20000), milliseconds(1), milliseconds(10)), &lock));
  EXPECT_TRUE(lock.held());
  EXPECT_FALSE(lock.busy()) << "busy() is only for a lock not had";
  EXPECT_EQ(lock.error(), 0);
  EXPECT_GT(lock.waited().count(), 0) << "it had to wait for the holder";
  EXPECT_LT(lock.waited(), milliseconds(20000));
}

TEST_P(FileLockKinds, UpToGivesBusyWhenTheHolderKeepsIt) {
  const LockKind kind = GetParam();
  Peer holder(path_, kind, LockRange::whole_file());
  ASSERT_EQ(holder.ask('l'), 'h');
  const milliseconds max(150);
  const auto start = std::chrono::steady_clock::now();
  FileLock lock = FileLock::acquire(open_rw(path_), kind, LockRange::whole_file(),
                                    LockWait::up_to(max, milliseconds(1), milliseconds(20)));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(lock.held());
  EXPECT_TRUE(lock.busy());
  EXPECT_EQ(lock.error(), 0);
  EXPECT_LT(took, 10 * max) << "a bounded wait returns";
  EXPECT_LT(lock.waited(), 10 * max);
}

TEST_P(FileLockKinds, ForeverBlocksUntilTheHolderLetsGo) {
  FileLock lock;
  ASSERT_NO_FATAL_FAILURE(acquire_as_the_holder_lets_go(path_, GetParam(), milliseconds(100),
                                                        LockWait::forever(), &lock));
  EXPECT_TRUE(lock.held());
  EXPECT_EQ(lock.error(), 0);
}

// file_lock.h: a child closing its copy of the descriptor leaves the lock with the parent;
// abandon() is how that child forgets the lock without touching it.
TEST_P(FileLockKinds, AbandonInAForkedChildLeavesTheParentsLockHeld) {
  const LockKind kind = GetParam();
  FileLock lock;
  ASSERT_NO_FATAL_FAILURE(check_in_a_forked_child(kind, &lock, [&] {
    ::close(lock.fd());  // what close-on-fork would have done
    lock.abandon();
    const bool ok = !lock.held() && lock.fd() == -1;
    return ok && try_other(kind).busy();  // the parent still holds it
  }));
  EXPECT_TRUE(lock.held());
  EXPECT_TRUE(try_other(kind).busy()) << "the child's exit left the lock with the parent";
  Peer other(path_, kind, LockRange::whole_file());
  EXPECT_EQ(other.ask('l'), 'b');
  lock.unlock();
  EXPECT_EQ(other.ask('l'), 'h');
}

// The other half of the documented fork semantics: an explicit unlock in the child frees the
// shared description's lock for both.
TEST_P(FileLockKinds, UnlockInAForkedChildFreesItForTheParentToo) {
  const LockKind kind = GetParam();
  FileLock lock;
  ASSERT_NO_FATAL_FAILURE(check_in_a_forked_child(kind, &lock, [&] {
    lock.unlock();
    return try_other(kind).held();
  }));
  EXPECT_TRUE(try_other(kind).held()) << "the parent's object still says held, the kernel not";
  lock.unlock();  // the kernel has nothing left to unlock; this closes the descriptor
  EXPECT_EQ(lock.fd(), -1);
}

TEST_P(FileLockKinds, TakeFdKeepsTheLockWhileTheDescriptorLives) {
  const LockKind kind = GetParam();
  FileLock lock = try_other(kind);
  ASSERT_TRUE(lock.held());
  const int number = lock.fd();
  UniqueFd fd = std::move(lock).take_fd();
  EXPECT_EQ(fd.get(), number);
  EXPECT_FALSE(lock.held());
  EXPECT_EQ(lock.fd(), -1);
  lock = FileLock();  // destroying the emptied lock unlocks nothing
  EXPECT_TRUE(try_other(kind).busy());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);  // closes its copy: the lock stays
  expect_child_passed(child);
  Peer other(path_, kind, LockRange::whole_file());
  EXPECT_EQ(other.ask('l'), 'b');
  fd.reset();
  EXPECT_EQ(other.ask('l'), 'h') << "closing the last descriptor released it";
}

TEST_P(FileLockKinds, TakeFdOfALockNotHeldClosesItsDescriptor) {
  const LockKind kind = GetParam();
  FileLock holder = try_other(kind);
  ASSERT_TRUE(holder.held());
  FileLock busy = try_other(kind);
  ASSERT_TRUE(busy.busy());
  EXPECT_FALSE(std::move(busy).take_fd().valid());
  EXPECT_EQ(busy.fd(), -1);
}

TEST_P(FileLockKinds, ABorrowedDescriptorStaysOpen) {
  const LockKind kind = GetParam();
  UniqueFd fd = open_rw(path_);
  {
    FileLock lock =
        FileLock::acquire_borrowed(fd.get(), kind, LockRange::whole_file(), LockWait::once());
    ASSERT_TRUE(lock.held());
    EXPECT_EQ(lock.fd(), fd.get());
    EXPECT_TRUE(try_other(kind).busy());
  }
  EXPECT_NE(::fcntl(fd.get(), F_GETFD), -1) << "the lock closed a descriptor it borrowed";
  EXPECT_TRUE(try_other(kind).held()) << "destroying it still unlocked";
  FileLock again =
      FileLock::acquire_borrowed(fd.get(), kind, LockRange::whole_file(), LockWait::once());
  ASSERT_TRUE(again.held());
  again.unlock();
  EXPECT_EQ(again.fd(), -1);
  EXPECT_NE(::fcntl(fd.get(), F_GETFD), -1);
}

TEST_P(FileLockKinds, AnInvalidDescriptorIsAnErrorNotAHold) {
  const LockKind kind = GetParam();
  FileLock invalid[] = {
      FileLock::acquire(UniqueFd(), kind, LockRange::whole_file(), LockWait::once()),
      FileLock::acquire_borrowed(-1, kind, LockRange::whole_file(), LockWait::forever())};
  for (const FileLock& lock : invalid) {
    EXPECT_FALSE(lock.held());
    EXPECT_FALSE(lock.busy());
    EXPECT_EQ(lock.error(), EBADF);
    EXPECT_EQ(lock.fd(), -1);
  }
  // A number that names no open descriptor: the kernel's EBADF.
  FileLock closed = FileLock::acquire_borrowed(
      999, kind, LockRange::whole_file(),
      LockWait::up_to(milliseconds(1000), milliseconds(1), milliseconds(5)));
  EXPECT_FALSE(closed.held());
  EXPECT_FALSE(closed.busy());
  EXPECT_EQ(closed.error(), EBADF);
}

TEST_P(FileLockKinds, MoveAssigningOverAHeldLockUnlocksIt) {
  const LockKind kind = GetParam();
  FileLock lock = try_other(kind);
  ASSERT_TRUE(lock.held());
  FileLock moved(std::move(lock));
  EXPECT_FALSE(lock.held());
  EXPECT_TRUE(moved.held());
  EXPECT_TRUE(try_other(kind).busy());
  moved = FileLock();
  EXPECT_FALSE(moved.held());
  EXPECT_TRUE(try_other(kind).held());
}

// Two processes, 200 rounds each of lock, read, add one, write, unlock: no update is lost. The
// parent blocks, the child polls, each on its own description (owned anew each round in the
// child, one borrowed in the parent).
TEST_P(FileLockKinds, TwoProcessesCountingUnderTheLockLoseNoUpdate) {
  const LockKind kind = GetParam();
  const LockRange range = kind == LockKind::kFlock ? LockRange::whole_file() : LockRange{0, 8};
  constexpr int kRounds = 200;
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(60);
    ::close(start[1]);
    char go = 0;
    const bool started = ::read(start[0], &go, 1) == 1;  // both count at once
    ::close(start[0]);
    if (!started) ::_exit(2);
    bool ok = true;
    for (int i = 0; i < kRounds && ok; ++i) {
      FileLock lock =
          FileLock::acquire(open_rw(path_), kind, range,
                            LockWait::up_to(milliseconds(20000), milliseconds(1), milliseconds(2)));
      ok = lock.held() && increment(lock.fd());
    }
    ::_exit(ok ? 0 : 1);
  }
  ::close(start[0]);
  UniqueFd fd = open_rw(path_);
  const char go = 'g';
  ASSERT_EQ(::write(start[1], &go, 1), 1);
  ::close(start[1]);
  for (int i = 0; i < kRounds; ++i) {
    FileLock lock = FileLock::acquire_borrowed(fd.get(), kind, range, LockWait::forever());
    ASSERT_TRUE(lock.held()) << "round " << i;
    ASSERT_TRUE(increment(fd.get()));
  }
  expect_child_passed(child);
  EXPECT_EQ(counter(), 2 * kRounds);
}

// The same between threads of one process, each with its own description (what TSan watches).
TEST_P(FileLockKinds, ThreadsCountingUnderTheLockLoseNoUpdate) {
  const LockKind kind = GetParam();
  constexpr int kThreads = 4, kRounds = 200;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // all count at once
      const LockWait wait =
          t % 2 == 0 ? LockWait::forever()
                     : LockWait::up_to(milliseconds(20000), milliseconds(1), milliseconds(2));
      for (int i = 0; i < kRounds; ++i) {
        FileLock lock = FileLock::acquire(open_rw(path_), kind, LockRange::whole_file(), wait);
        if (!lock.held() || !increment(lock.fd())) ++failures[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_EQ(counter(), kThreads * kRounds);
}

INSTANTIATE_TEST_SUITE_P(Kinds, FileLockKinds,
                         ::testing::Values(LockKind::kOpenFileDescription, LockKind::kFlock),
                         kind_name);

TEST_F(FileLockTest, DifferentBytesDoNotExcludeTheSameByteDoes) {
  const LockKind ofd = LockKind::kOpenFileDescription;
  Peer holder(path_, ofd, LockRange::byte(5));
  ASSERT_EQ(holder.ask('l'), 'h');
  EXPECT_TRUE(try_other(ofd, LockRange::byte(6)).held());
  EXPECT_TRUE(try_other(ofd, LockRange::byte(4)).held());
  EXPECT_TRUE(try_other(ofd, LockRange::byte(5)).busy());
  EXPECT_TRUE(try_other(ofd, LockRange{0, 5}).held()) << "bytes 0..4";
  EXPECT_TRUE(try_other(ofd, LockRange{0, 6}).busy()) << "bytes 0..5";
  EXPECT_TRUE(try_other(ofd, LockRange{6, 0}).held()) << "from 6 to the end";
  EXPECT_TRUE(try_other(ofd, LockRange::whole_file()).busy());
  EXPECT_TRUE(try_other(ofd, LockRange{1000, 0}).held()) << "beyond the end of the file";
  // Two byte locks of other bytes held at once by two processes.
  FileLock six = try_other(ofd, LockRange::byte(6));
  ASSERT_TRUE(six.held());
  Peer seven(path_, ofd, LockRange::byte(7));
  EXPECT_EQ(seven.ask('l'), 'h');
  Peer also_six(path_, ofd, LockRange::byte(6));
  EXPECT_EQ(also_six.ask('l'), 'b');
}

TEST_F(FileLockTest, FlockHasNoByteRanges) {
  FileLock lock = try_other(LockKind::kFlock, LockRange::byte(3));
  EXPECT_FALSE(lock.held());
  EXPECT_FALSE(lock.busy());
  EXPECT_EQ(lock.error(), EINVAL);
}

TEST_F(FileLockTest, LockedElsewhereSeesAnotherProcessesLockNotItsOwn) {
  const LockKind ofd = LockKind::kOpenFileDescription;
  Peer holder(path_, ofd, LockRange::byte(3));
  UniqueFd fd = open_rw(path_);
  EXPECT_EQ(locked_elsewhere(fd.get(), LockRange::byte(3)), false) << "nothing held yet";
  ASSERT_EQ(holder.ask('l'), 'h');
  EXPECT_EQ(locked_elsewhere(fd.get(), LockRange::byte(3)), true);
  EXPECT_EQ(locked_elsewhere(fd.get(), LockRange::whole_file()), true);
  EXPECT_EQ(locked_elsewhere(fd.get(), LockRange::byte(4)), false);
  EXPECT_EQ(holder.ask('g'), 'n') << "its own lock is not elsewhere";

  FileLock mine = FileLock::acquire_borrowed(fd.get(), ofd, LockRange::byte(7), LockWait::once());
  ASSERT_TRUE(mine.held());
  EXPECT_EQ(locked_elsewhere(fd.get(), LockRange::byte(7)), false) << "its own lock";
  Peer seven(path_, ofd, LockRange::byte(7));
  EXPECT_EQ(seven.ask('g'), 'y') << "the other process sees it";
  mine.unlock();
  EXPECT_EQ(seven.ask('g'), 'n');

  EXPECT_EQ(holder.ask('u'), 'u');
  EXPECT_EQ(locked_elsewhere(fd.get(), LockRange::byte(3)), false) << "released";
}

TEST_F(FileLockTest, LockedElsewhereOnABadDescriptorIsUnknown) {
  errno = 0;
  const std::optional<bool> answer = locked_elsewhere(-1, LockRange::whole_file());
  const int error = errno;
  EXPECT_EQ(answer, std::nullopt);
  EXPECT_EQ(error, EBADF);
}

}  // namespace
}  // namespace hipacm::backend
