// SPDX-License-Identifier: MIT
// fork_epoch.h - the process's one set of fork() handlers, the order they take locks in, and the
// count of forks that tells a child's objects from its parent's.
#pragma once

#include <cstdint>

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
  kModeRegistry,    // plugin/mode: the live mode handles (the child also empties the slot)
  kFutureRegistry,  // plugin/mode: the live future handles
  kCacheRegistry,   // plugin/cache: the opened cache databases
  kWorkerPool,      // hip_backend/worker: idle and busy worker processes
  kWorkerFds,       // hip_backend/worker: every worker descriptor (closed in the child)
  kRecordFile,      // plugin/mode: the $HIPACM_RECORD file (reopened in the child)
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

/// The process's one T, built on first use and never destroyed, whose member `mutex` fork()
/// holds at `Rank`: a child never inherits it locked. `InChild` runs in the child, the lock still
/// held, before it is released (to forget what belonged to the parent's threads).
///
///   Registry& registry() { return ForkGuarded<Registry, ForkRank::kCacheRegistry>::instance(); }
template <class T, ForkRank Rank, void (*InChild)(T&) noexcept = &fork_detail::nothing_more<T>>
class ForkGuarded {
 public:
  /// Built, then joined to the fork epoch, on first use: before any caller can take the lock.
  static T& instance() {
    T& value = storage();
    static const bool joined = (join_fork_epoch(Rank, kParticipant), true);
    (void)joined;
    return value;
  }

 private:
  // Apart from the join in instance(): a fork handler must never wait on the guard of a static
  // whose initialiser is itself waiting for that fork to end.
  static T& storage() {
    static backend::NoDestructor<T> value;
    return *value;
  }
  static void prepare() noexcept { storage().mutex.lock(); }
  static void parent() noexcept { storage().mutex.unlock(); }
  static void child() noexcept {
    InChild(storage());
    storage().mutex.unlock();
  }
  static constexpr ForkParticipant kParticipant{&prepare, &parent, &child};
};

}  // namespace hipacm
