// SPDX-License-Identifier: MIT
// worker_pool.cpp - checks hipacm-worker processes out and in, retires idle ones, survives fork().
#include "hip_backend/pool/worker_pool.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/thread.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "hip_backend/process/warmup_kernel.h"
#include "support/settings.h"

namespace hipacm::backend {
namespace {

// Capped at a year (settings.h): more would overflow the clock arithmetic (since + timeout) and
// retire workers at once.
boost::chrono::milliseconds idle_timeout_from_env() {
  return boost::chrono::milliseconds(settings::worker_idle_ms());
}

}  // namespace

WorkerPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      machine_slot_(std::move(other.machine_slot_)),
      worker_(std::move(other.worker_)),
      error_(std::move(other.error_)) {}

WorkerPool::Lease::~Lease() {
  if (pool_) pool_->checkin(std::move(worker_), std::move(machine_slot_));
}

WorkerPool& WorkerPool::instance() {
  // Never destroyed; see the class comment.
  return ForkGuarded<WorkerPool, ForkRank::kWorkerPool, &forget_parent_in_child>::instance();
}

WorkerPool::WorkerPool() : idle_timeout_(idle_timeout_from_env()) {}

WorkerPool::Lease WorkerPool::checkout(const std::string& path, unsigned max_busy,
                                       const std::string& arch, std::uint32_t slot_timeout_ms) {
  return checkout_for(path, max_busy, arch, false, slot_timeout_ms);
}

WorkerPool::Lease WorkerPool::checkout_for(const std::string& path, unsigned max_busy,
                                           const std::string& arch, bool prestarting,
                                           std::uint32_t slot_timeout_ms) {
  if (max_busy == 0) max_busy = 1;
  Lease lease;
  {
    boost::unique_lock<boost::mutex> lock(mutex);
    slot_freed_.wait(lock, [&] {
      return (prestarting && shutting_down_) || (!shutting_down_ && busy_ < max_busy);
    });
    if (prestarting) --prestarting_;  // counted in busy_ from here, or gone
    if (shutting_down_) {
      slot_freed_.notify_all();  // shutdown() waits for the last prestart to leave
      return Lease();
    }
    ++busy_;
    lease.pool_ = this;  // from here on the lease's destructor frees the slot
  }
  // Outside the pool's lock: other processes' compiles decide how long this takes. Spawning a
  // worker is compiler work too (it loads and initialises the compiler), so it waits as well.
  // A stopped holder of the last slot never gives it back: the wait ends at the compile's
  // timeout, or at the budget's own bound (then over budget).
  std::optional<std::chrono::steady_clock::time_point> slot_deadline;
  if (slot_timeout_ms > 0)
    slot_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(slot_timeout_ms);
  lease.machine_slot_ = MachineBudget::instance().acquire(slot_deadline);
  if (lease.machine_slot_.timed_out()) {
    Lease timed_out;  // no worker, no busy count: `lease` gives that back as it goes
    timed_out.machine_slot_ = std::move(lease.machine_slot_);
    timed_out.error_ = timed_out.machine_slot_.wait_reason();
    return timed_out;
  }
  while (std::unique_ptr<WorkerProcess> worker = take_idle(path)) {
    if (worker->probe_idle()) {
      lease.worker_ = std::move(worker);
      return lease;
    }
    // It died while idle (the OOM killer, a stray SIGKILL): reap it, look again.
  }
  Expected<std::unique_ptr<WorkerProcess>> spawned = WorkerProcess::spawn(path, arch);
  if (!spawned) {
    Lease failed;  // `lease` frees the slot as it goes
    failed.error_ = std::move(spawned).failure().message;
    return failed;
  }
  lease.worker_ = std::move(spawned).value();
  return lease;
}

void WorkerPool::prestart(const std::string& path, unsigned count, const std::string& arch,
                          std::uint32_t timeout_ms) noexcept {
  boost::lock_guard<boost::mutex> lock(mutex);
  if (shutting_down_) return;
  unsigned ready = busy_ + prestarting_;
  for (const Idle& idle : idle_) ready += idle.worker->path() == path ? 1 : 0;
  for (; ready < count; ++ready) {
    try {
      // One thread per worker: the point is that they all start at once, as a burst of
      // submits would start them.
      boost::thread starter(
          [this, path, count, arch, timeout_ms] { prestart_one(path, count, arch, timeout_ms); });
      starter.detach();
      ++prestarting_;
    } catch (...) {
      return;  // no thread (or no memory): the compiles start their workers themselves
    }
  }
}

void WorkerPool::prestart_one(const std::string& path, unsigned count, const std::string& arch,
                              std::uint32_t timeout_ms) noexcept {
  constexpr std::uint32_t kLongestWarmupMs = 120000;
  try {
    Lease lease = checkout_for(path, count, arch, true);
    if (!lease || arch.empty()) return;
    // A worker that fails its warm-up is marked unusable and retired at checkin: the compile that
    // would have had it gets a fresh one and reports the failure as its own.
    (void)lease->compile(warmup_request(arch), timeout_ms == 0 || timeout_ms > kLongestWarmupMs
                                                   ? kLongestWarmupMs
                                                   : timeout_ms);
  } catch (...) {
    // Nothing waits on a prestart: its worker, if any, went back with the lease.
  }
}

std::unique_ptr<WorkerProcess> WorkerPool::take_idle(const std::string& path) {
  boost::lock_guard<boost::mutex> lock(mutex);
  // Most recently used first: it is warmest, and the others can age out.
  for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
    if (it->worker->path() != path) continue;
    std::unique_ptr<WorkerProcess> worker = std::move(it->worker);
    idle_.erase(std::next(it).base());
    return worker;
  }
  return nullptr;
}

void WorkerPool::checkin(std::unique_ptr<WorkerProcess> worker, MachineSlot slot) noexcept {
  {
    boost::lock_guard<boost::mutex> lock(mutex);
    if (worker && worker->usable() && !shutting_down_) {
      try {
        idle_.emplace_back();  // may throw; `worker` is untouched then and retires below
        idle_.back().worker = std::move(worker);
        idle_.back().since = Clock::now();
        start_reaper_locked();
        reaper_wake_.notify_all();
      } catch (...) {
      }
    }
  }
  // Outside the lock, since a retiring worker may take a moment to exit, but still counted busy:
  // it is a compiler process until it is gone, and shutdown() must not return before that.
  worker.reset();
  slot = MachineSlot();
  {
    boost::lock_guard<boost::mutex> lock(mutex);
    --busy_;
  }
  // Callers wait with different limits, so wake them all to re-check.
  slot_freed_.notify_all();
}

void WorkerPool::start_reaper_locked() noexcept {
  if (reaper_running_) return;
  try {
    // Detached: it ends by itself once nothing is idle, and shutdown() waits
    // for reaper_running_ to drop, which is its last act under the lock.
    boost::thread reaper([this] { reaper_loop(); });
    reaper.detach();
    reaper_running_ = true;
  } catch (...) {
    // No thread: idle workers then stay until the next shutdown() or exit.
  }
}

void WorkerPool::reaper_loop() {
  boost::unique_lock<boost::mutex> lock(mutex);
  while (!shutting_down_ && !idle_.empty()) {
    const Clock::time_point now = Clock::now();
    if (idle_.front().since + idle_timeout_ > now) {
      const Clock::time_point deadline = idle_.front().since + idle_timeout_;
      reaper_wake_.wait_until(lock, deadline);
      continue;
    }
    std::vector<std::unique_ptr<WorkerProcess>> retired;
    try {
      while (!idle_.empty() && idle_.front().since + idle_timeout_ <= now) {
        retired.push_back(std::move(idle_.front().worker));
        idle_.pop_front();
      }
    } catch (...) {
      // Out of memory for the list: what was moved out retires now, the rest later.
    }
    lock.unlock();
    retired.clear();  // closes sockets; each worker exits on EOF
    lock.lock();
  }
  reaper_running_ = false;
  reaper_wake_.notify_all();
}

void WorkerPool::shutdown() {
  std::deque<Idle> retired;
  {
    boost::unique_lock<boost::mutex> lock(mutex);
    slot_freed_.wait(lock, [&] { return !shutting_down_; });  // one shutdown at a time
    shutting_down_ = true;
    slot_freed_.notify_all();  // waiting prestarts give up
    slot_freed_.wait(lock, [&] { return busy_ == 0 && prestarting_ == 0; });
    retired.swap(idle_);
    reaper_wake_.notify_all();
    reaper_wake_.wait(lock, [&] { return !reaper_running_; });
    shutting_down_ = false;
  }
  slot_freed_.notify_all();
  retired.clear();
}

std::size_t WorkerPool::idle_count() const {
  boost::lock_guard<boost::mutex> lock(mutex);
  return idle_.size();
}

std::size_t WorkerPool::busy_count() const {
  boost::lock_guard<boost::mutex> lock(mutex);
  return busy_;
}

void WorkerPool::set_idle_timeout(std::chrono::milliseconds timeout) {
  boost::lock_guard<boost::mutex> lock(mutex);
  idle_timeout_ = boost::chrono::milliseconds(timeout.count());
  reaper_wake_.notify_all();
}

// fork() holds the pool lock (ForkGuarded), so the child copies a consistent pool, which it then
// empties.
void WorkerPool::forget_parent_in_child(WorkerPool& pool) noexcept {
  // The idle workers belong to the parent. Their destructors see a foreign
  // owner pid and only forget their descriptors, which the fd registry's
  // child handler has closed (a later rank: its child handler runs first).
  // Busy ones are held by threads that do not exist here.
  pool.idle_.clear();
  pool.busy_ = 0;
  pool.prestarting_ = 0;
  pool.reaper_running_ = false;  // threads do not survive fork()
  pool.shutting_down_ = false;
  // Threads of the parent may have been waiting on these; in the child they
  // never will, and a glibc condvar with phantom waiters can block signallers.
  // Reusing the storage ends the old objects without running their destructors.
  std::construct_at(&pool.slot_freed_);
  std::construct_at(&pool.reaper_wake_);
}

}  // namespace hipacm::backend
