// SPDX-License-Identifier: MIT
// fork_epoch.h - the process's one set of fork() handlers, the order they take locks in, and the
// count of forks that tells a child's objects from its parent's.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <thread>

#include "support/no_destructor.h"

namespace hipacm {

/// Every lock that fork() holds, in the one order it takes them. A thread may hold a lock while
/// it takes one of a later rank, never the other way round: upper layers call down into lower
/// ones while holding their own locks, so the list runs from the top layer to the bottom. Prepare
/// handlers run in this order; parent and child handlers in the reverse order, after the epoch
/// has moved on in the child. A new participant gets its place here and nowhere else.
enum class ForkRank : unsigned {
  kLogSink,  // support/log: set_log_sink, taken with no other lock held while it waits for
             // sink calls that may hold any lock below (the child forgets other threads' calls)
  kModeRegistry,     // plugin/mode: the live mode handles (the child also empties the slot)
  kFutureRegistry,   // plugin/mode: the live future handles
  kCacheRegistry,    // plugin/cache: the opened cache databases
  kWorkerPool,       // hip_backend/pool: idle and busy worker processes
  kWorkerFds,        // hip_backend/process: every worker descriptor (closed in the child)
  kRecordFile,       // plugin/record: the $HIPACM_RECORD file (reopened in the child)
  kAdoptedServices,  // hip_backend/process: compile services a subreaper host adopted
  kCount
};

/// One participant's handlers, as pthread_atfork takes them. They run on the forking thread;
/// the child handler runs in a process with that one thread.
struct ForkParticipant {
  void (*prepare)() noexcept;
  void (*parent)() noexcept;
  void (*child)() noexcept;
};

/// Puts `participant` at `rank` (the first call for a rank wins; later ones are ignored), makes
/// sure the handlers are installed, once per process, and returns once no fork() that started
/// without the participant is still in flight. `participant` must live as long as the process (a
/// static constant). Call it before taking the participant's lock and never while holding the
/// lock of any participant: a concurrent fork() may be waiting for that lock. Thread-safe, never
/// throws.
void join_fork_epoch(ForkRank rank, const ForkParticipant& participant) noexcept;

/// How many fork()s separate this process from the one that started the count: 0 until a child
/// is made, then one more in each child. An object stamped with an older epoch was made in a
/// parent, whose threads do not exist here. Counts only forks after the first join_fork_epoch().
std::uint64_t fork_epoch() noexcept;

namespace fork_detail {
template <class T>
void nothing_more(T&) noexcept {}
}  // namespace fork_detail

/// Runs an initialiser once per process, and stays correct across fork(). A function-local
/// static's guard is not: when fork() copies it while another thread is inside the initialiser,
/// the child finds it "in progress" for ever, since that thread does not exist there, and hangs
/// on first use. Here the state names the process whose thread is initialising, so a child that
/// finds a parent's claim runs the initialiser itself. The initialiser must therefore tolerate
/// running over a half-built object (placement new into storage that owns nothing yet).
/// Constant-initialised: usable as a static without a global constructor.
class ForkSafeOnce {
 public:
  constexpr ForkSafeOnce() noexcept = default;

  template <class Init>
  void call(Init&& init) {
    for (;;) {
      std::uint64_t state = state_.load(std::memory_order_acquire);
      if (state == kDone) return;
      const std::uint64_t mine = static_cast<std::uint64_t>(::getpid()) << 1;
      if (state == mine) {  // another thread of this process is initialising
        std::this_thread::yield();
        continue;
      }
      // Free, or claimed by a thread of a parent process that is not here.
      if (!state_.compare_exchange_weak(state, mine, std::memory_order_acq_rel)) continue;
      try {
        init();
      } catch (...) {
        state_.store(kFree, std::memory_order_release);
        throw;
      }
      state_.store(kDone, std::memory_order_release);
      return;
    }
  }
  /// For a fork child handler that knows the initialiser had finished what the child needs.
  void mark_done() noexcept { state_.store(kDone, std::memory_order_release); }

 private:
  static constexpr std::uint64_t kFree = 0;
  static constexpr std::uint64_t kDone = 1;  // claims are pid << 1: even and at least 2
  std::atomic<std::uint64_t> state_{kFree};
};

/// The process's one T, built on first use and never destroyed, whose member `mutex` fork()
/// holds at `Rank`: a child never inherits it locked. `InChild` runs in the child, the lock still
/// held, before it is released (to forget what belonged to the parent's threads).
///
///   Registry& registry() { return ForkGuarded<Registry, ForkRank::kCacheRegistry>::instance(); }
template <class T, ForkRank Rank, void (*InChild)(T&) noexcept = &fork_detail::nothing_more<T>>
class ForkGuarded {
 public:
  /// Built, then joined to the fork epoch, on first use: before any caller can take the lock.
  /// A fork() while another thread builds it leaves the child to build its own.
  static T& instance() {
    once_.call([] {
      ::new (static_cast<void*>(buffer_)) backend::NoDestructor<T>();
      join_fork_epoch(Rank, kParticipant);
    });
    return storage();
  }

 private:
  static T& storage() {
    return **std::launder(reinterpret_cast<backend::NoDestructor<T>*>(buffer_));
  }
  static void prepare() noexcept { storage().mutex.lock(); }
  static void parent() noexcept { storage().mutex.unlock(); }
  static void child() noexcept {
    InChild(storage());
    storage().mutex.unlock();
    // This handler runs only for a joined participant, so the object was whole at the fork.
    once_.mark_done();
  }
  static constexpr ForkParticipant kParticipant{&prepare, &parent, &child};
  // Zero-initialised storage and a constant-initialised once: no guard that fork() could copy
  // half-taken, and no global constructor.
  alignas(backend::NoDestructor<T>) static inline unsigned char buffer_[sizeof(
      backend::NoDestructor<T>)];
  static constinit inline ForkSafeOnce once_;
};

}  // namespace hipacm
