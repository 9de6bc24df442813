// SPDX-License-Identifier: MIT
// fork_epoch.cpp - one pthread_atfork registration that runs every participant in rank order.
#include "support/fork_epoch.h"

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <thread>

namespace hipacm {
namespace {

constexpr std::size_t kRanks = static_cast<std::size_t>(ForkRank::kCount);
static_assert(kRanks <= 32, "the prepared set is a 32-bit mask");

// Constant-initialised: no global constructor runs when a library holding this is loaded.
std::atomic<const ForkParticipant*> g_participants[kRanks] = {};
std::atomic<std::uint64_t> g_epoch{0};
// fork()s between their prepare and their parent or child handlers. A participant that joins
// while one is in flight waits for it to end: that fork did not take its lock, so the child must
// not inherit that lock taken.
std::atomic<unsigned> g_forks_in_flight{0};

// The participants whose prepare handler ran for the fork in progress on this thread: one that
// joins between prepare and the child must not have a lock released that it never took.
thread_local std::uint32_t t_prepared = 0;

void prepare() noexcept {
  // Sequentially consistent, as is the store in join_fork_epoch(): either this fork sees the
  // new participant, or the joining thread sees this fork in flight.
  g_forks_in_flight.fetch_add(1, std::memory_order_seq_cst);
  std::uint32_t prepared = 0;
  for (std::size_t rank = 0; rank < kRanks; ++rank) {
    const ForkParticipant* participant = g_participants[rank].load(std::memory_order_seq_cst);
    if (participant == nullptr) continue;
    participant->prepare();
    prepared |= std::uint32_t{1} << rank;
  }
  t_prepared = prepared;
}

template <void (*ForkParticipant::*Handler)() noexcept>
void run_in_reverse() noexcept {
  for (std::size_t rank = kRanks; rank-- > 0;) {
    if ((t_prepared & (std::uint32_t{1} << rank)) == 0) continue;
    (g_participants[rank].load(std::memory_order_acquire)->*Handler)();
  }
  t_prepared = 0;
}

void in_parent() noexcept {
  run_in_reverse<&ForkParticipant::parent>();
  g_forks_in_flight.fetch_sub(1, std::memory_order_release);
}

// pthread_atfork and fork() exclude each other, so a fork either copies the registration or
// happens before it; only in the first case does in_child() run, and mark it done.
constinit ForkSafeOnce g_install;

void in_child() noexcept {
  g_install.mark_done();
  // First, so that every child handler already sees the parent's objects as foreign.
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
  run_in_reverse<&ForkParticipant::child>();
  // Only the forking thread was copied: no other fork is in flight here.
  g_forks_in_flight.store(0, std::memory_order_release);
}

void install_once() noexcept {
  g_install.call([] { pthread_atfork(&prepare, &in_parent, &in_child); });
}

}  // namespace

void join_fork_epoch(ForkRank rank, const ForkParticipant& participant) noexcept {
  const auto index = static_cast<std::size_t>(rank);
  if (index >= kRanks) return;
  const ForkParticipant* expected = nullptr;
  g_participants[index].compare_exchange_strong(expected, &participant, std::memory_order_seq_cst);
  install_once();
  // A fork takes milliseconds at most; the caller takes its lock only after this returns.
  while (g_forks_in_flight.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

std::uint64_t fork_epoch() noexcept { return g_epoch.load(std::memory_order_acquire); }

}  // namespace hipacm
