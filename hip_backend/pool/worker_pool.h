// SPDX-License-Identifier: MIT
// worker_pool.h - the process-wide pool of warm hipacm-worker processes, shared by every mode.
#pragma once

#include <boost/chrono/system_clocks.hpp>
#include <boost/thread/condition_variable.hpp>
#include <boost/thread/mutex.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "hip_backend/machine/machine_budget.h"
#include "hip_backend/pool/worker_process.h"
#include "support/fork_epoch.h"

namespace hipacm::backend {

/// Warm workers outlive modes: a worker pays its ~0.15 s hipRTC start-up once
/// and then serves any number of compiles. Workers start lazily. Callers
/// limit how many are busy at once (a caller with max_busy N waits while N
/// or more are busy), so the pool grows to the largest N anyone asked for.
/// An idle worker retires after the idle timeout ($HIPACM_IDLE_MS's first
/// number, default 60000 ms), using a reaper thread that exists only while some
/// worker is idle. A failed worker is never reused.
///
/// The pool is never destroyed (threads may use it while exit() runs static
/// destructors). At host exit its workers go away on their own: the kernel
/// closes the host's sockets, so an idle worker reads EOF and a busy one
/// gets its parent-death signal.
///
/// After fork(), the child's pool forgets the parent's workers without
/// signalling or waiting for them (they are not its children) and starts its
/// own on demand.
class WorkerPool {
 public:
  /// A checked-out worker. Its destructor gives it back: to the idle list if
  /// it is still usable, otherwise to be killed and reaped.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    explicit operator bool() const { return worker_ != nullptr; }
    WorkerProcess* operator->() const { return worker_.get(); }
    WorkerProcess& operator*() const { return *worker_; }
    /// The machine-wide slot: how long the checkout waited for it, and, in an empty Lease,
    /// whether that wait reached checkout()'s slot_timeout_ms (timed_out()).
    const MachineSlot& machine_slot() const { return machine_slot_; }
    /// In an empty Lease: why there is no worker (the slot's wait, or why none could start).
    const std::string& error() const { return error_; }

   private:
    friend class WorkerPool;
    explicit Lease(WorkerPool* pool) : pool_(pool) {}
    WorkerPool* pool_ = nullptr;  ///< non-null while a busy slot is held
    MachineSlot machine_slot_;    ///< this user's machine-wide slot, freed by the checkin
    std::unique_ptr<WorkerProcess> worker_;
    std::string error_;
  };

  /// The process-wide pool (created on first use, never destroyed).
  static WorkerPool& instance();

  /// Waits until fewer than max_busy workers are busy (0 counts as 1) and
  /// until the user's machine-wide budget (MachineBudget::instance()) has a
  /// free slot, then returns the most recently used idle worker of `path`
  /// that is still alive, or a new one. An empty Lease, whose error() says why, when spawning
  /// fails.
  /// Throws only std::bad_alloc (nothing is held then).
  /// `arch`: the compile the worker is for; a new worker from the compile service comes with
  /// that arch's compiler warm. `slot_timeout_ms` (0: none) bounds the wait for the machine-wide
  /// slot: an empty Lease whose machine_slot().timed_out() when it runs out.
  Lease checkout(const std::string& path, unsigned max_busy, const std::string& arch = {},
                 std::uint32_t slot_timeout_ms = 0);

  /// Starts workers of `path` in the background until `count` are idle, busy or starting, each
  /// warmed by a trivial compile for `arch` (none when empty), so that the compiles that follow
  /// find them ready. A starting worker is checked out like any other (max_busy `count`, a
  /// machine-budget slot), so it never adds to what a mode may run; a compile that arrives
  /// meanwhile waits for it instead of spawning another. A warm-up is limited to `timeout_ms`
  /// (0: 120 s). Returns at once; never throws.
  void prestart(const std::string& path, unsigned count, const std::string& arch,
                std::uint32_t timeout_ms) noexcept;

  /// Retires every idle worker now, after waiting for busy ones to come back,
  /// and stops the reaper thread. Checkouts wait until it is done. The pool
  /// stays usable. For tests and for a host that wants its memory back.
  void shutdown();

  std::size_t idle_count() const;
  std::size_t busy_count() const;
  /// Overrides $HIPACM_IDLE_MS's worker part (tests).
  void set_idle_timeout(std::chrono::milliseconds timeout);

  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

 private:
  using Clock = boost::chrono::steady_clock;  // what boost::condition_variable waits on
  struct Idle {
    std::unique_ptr<WorkerProcess> worker;
    Clock::time_point since;
  };

  WorkerPool();
  ~WorkerPool() = default;
  template <typename T>
  friend class NoDestructor;
  // The process's one pool: built, then joined to the fork epoch at ForkRank::kWorkerPool.
  template <class T, ForkRank Rank, void (*InChild)(T&) noexcept>
  friend class ::hipacm::ForkGuarded;

  /// checkout(); a prestart's gives up (an empty Lease) once shutdown() has begun.
  Lease checkout_for(const std::string& path, unsigned max_busy, const std::string& arch,
                     bool prestarting, std::uint32_t slot_timeout_ms = 0);
  void prestart_one(const std::string& path, unsigned count, const std::string& arch,
                    std::uint32_t timeout_ms) noexcept;
  std::unique_ptr<WorkerProcess> take_idle(const std::string& path);
  /// Keeps `worker` idle or retires it, frees `slot`, and only then frees the busy count, so
  /// that a shutdown() which sees none busy leaves no worker, socket or slot behind.
  void checkin(std::unique_ptr<WorkerProcess> worker, MachineSlot slot) noexcept;
  void start_reaper_locked() noexcept;
  void reaper_loop();

  /// In a fork()ed child, with `mutex` held: forgets the parent's workers and threads.
  static void forget_parent_in_child(WorkerPool& pool) noexcept;

  mutable boost::mutex mutex;  ///< held by fork() (ForkGuarded), so the child copies a whole pool
  boost::condition_variable slot_freed_;   ///< busy_ dropped or shutdown ended
  boost::condition_variable reaper_wake_;  ///< idle list changed or reaper exited
  std::deque<Idle> idle_;                  ///< oldest first
  unsigned busy_ = 0;
  unsigned prestarting_ = 0;  ///< prestart threads not yet counted in busy_ or gone
  bool reaper_running_ = false;
  bool shutting_down_ = false;
  Clock::duration idle_timeout_;
};

}  // namespace hipacm::backend
