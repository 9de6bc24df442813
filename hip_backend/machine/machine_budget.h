// SPDX-License-Identifier: MIT
// machine_budget.h - the per-user, machine-wide limit on compiling workers: slots that every
// hipacm process of a user on one machine shares, held while a worker compiles.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "support/files/file_lock.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend {

/// How long a compile without a timeout waits for a slot before it compiles anyway, over the
/// budget, with a warning. Any holder that is compiling gives its slot back, but one that was
/// stopped (Ctrl-Z, SIGSTOP, a debugger) keeps it for as long as it stays stopped: a budget may
/// slow compiles down, never stall them. A compile with a timeout waits at most that long (its
/// timeout covers the wait), and then ends HIPACM_ERROR_TIMEOUT.
inline constexpr std::chrono::milliseconds kMaxSlotWait{30000};
/// After this long a waiter says (at info level) what it waits for, and for whom.
inline constexpr std::chrono::milliseconds kSlotWaitNotice{1000};

/// Where a budget lives and how big it is.
struct MachineBudgetConfig {
  /// How many workers of this user may compile at once on this machine; 0 = no limit.
  unsigned limit = 0;
  /// The private directory that holds the slot file (made 0700 when missing).
  std::string runtime_dir;
  /// How long acquire() waits before it compiles over the budget (kMaxSlotWait; tests shorten it).
  std::chrono::milliseconds max_wait = kMaxSlotWait;

  /// From $HIPACM_MACHINE_JOBS (a count, or "off" or 0; default: the machine's online CPUs) and
  /// $HIPACM_RUNTIME_DIR (default $XDG_RUNTIME_DIR/hipacm, else /tmp/hipacm-<uid>). A malformed
  /// count means the default, and *warning (when given) says so.
  static MachineBudgetConfig from_environment(std::string* warning);
};

/// One held slot of a MachineBudget. The holder's compile counts against the budget until the
/// slot is destroyed, which must happen before the budget's. Empty when there is no budget.
class MachineSlot {
 public:
  MachineSlot() noexcept = default;
  MachineSlot(MachineSlot&& other) noexcept;
  MachineSlot& operator=(MachineSlot&& other) noexcept;
  MachineSlot(const MachineSlot&) = delete;
  MachineSlot& operator=(const MachineSlot&) = delete;
  ~MachineSlot();

  bool held() const noexcept { return fd_.valid(); }
  /// Which of the budget's slots this is (0 .. limit-1); -1 when empty.
  std::int64_t index() const noexcept { return held() ? index_ : -1; }
  /// Empty because acquire() reached its deadline first: the compile must not run, and ends
  /// HIPACM_ERROR_TIMEOUT (see slot_wait_timeout_message()).
  bool timed_out() const noexcept { return timed_out_; }
  /// Empty because acquire() waited the budget's max_wait, or found a slot held by a stopped
  /// process: the compile runs over the budget.
  bool over_budget() const noexcept { return over_budget_; }
  /// How long acquire() waited for a slot.
  std::chrono::milliseconds waited() const noexcept { return waited_; }
  /// Why it had to wait, when it gave up: which slots were held, and by whom.
  const std::string& wait_reason() const noexcept { return wait_reason_; }

 private:
  friend class MachineBudget;
  void release() noexcept;

  UniqueFd fd_;    ///< its own open file description: OFD locks belong to descriptions
  FileLock lock_;  ///< the slot's byte, locked on fd_ (borrowed; the registry closes fd_)
  std::int64_t index_ = -1;
  const std::string* wake_fifo_ = nullptr;  ///< the budget's FIFO, written when the slot frees
  std::uint64_t epoch_ = 0;                 ///< fork epoch of the process that took it
  bool timed_out_ = false;
  bool over_budget_ = false;
  std::chrono::milliseconds waited_{0};
  std::string wait_reason_;
};

/// The error of a compile of `what` whose wait for a slot reached its `limit`.
std::string slot_wait_timeout_message(const std::string& what, std::chrono::milliseconds limit,
                                      const MachineSlot& slot);

/// Slots are one-byte open-file-description locks (F_OFD_SETLK) on `<runtime_dir>/worker-slots`,
/// so the kernel frees a slot however its holder dies: no daemon, nothing to clean up, and a
/// killed process never shrinks the budget. A process that finds every slot taken sleeps on a
/// FIFO beside the file, which every release writes one byte to, so a freed slot is taken within
/// a context switch rather than a polling interval; a slow poll covers holders that died.
///
/// Processes may name different limits: a process uses slots 0 .. its limit - 1, so all of them
/// together never run more than the largest limit among them.
///
/// A holder writes its pid beside its slot (past the lock bytes), so that a waiter can say whom
/// it waits for. A waiter never waits unbounded: see kMaxSlotWait.
///
/// A budget that cannot work (an unsafe or unwritable directory, a file system without OFD
/// locks) limits nothing and says why once: a budget may only slow compiles down, never fail
/// them.
class MachineBudget {
 public:
  explicit MachineBudget(MachineBudgetConfig config);

  /// The process's budget, configured from the environment on first use (never destroyed).
  static MachineBudget& instance();

  /// Blocks until one of the slots is free and returns it held; an empty slot when there is no
  /// limit. Waits at most until `deadline` (an empty slot that is timed_out()) and at most the
  /// configuration's max_wait (an empty slot that is over_budget(), with a warning), whichever
  /// comes first; after kSlotWaitNotice it logs, at info level, why it waits. A slot whose
  /// holder is stopped (SIGSTOP, Ctrl-Z) runs nothing on the machine's CPUs, so it is not waited
  /// for: when every slot is held and some holder is stopped, the compile goes over the budget at
  /// once. Never throws except std::bad_alloc.
  MachineSlot acquire(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

  /// 0 when nothing is limited.
  unsigned limit() const noexcept { return limit_; }
  /// The slot file; empty when nothing is limited.
  const std::string& slot_file() const noexcept { return slot_file_; }
  /// Why nothing is limited, when that is not the configuration's choice.
  const std::string& disabled_reason() const noexcept { return disabled_reason_; }
  /// How many of this budget's slots some process holds now (a snapshot), or nullopt when
  /// nothing is limited.
  std::optional<unsigned> slots_in_use() const;

  MachineBudget(const MachineBudget&) = delete;
  MachineBudget& operator=(const MachineBudget&) = delete;

 private:
  void disable(std::string reason) noexcept;
  /// Sleeps until a release writes to `wake` (the FIFO, open for reading) or the slow poll ends.
  static void wait_for_release(int wake, int max_ms) noexcept;
  /// Which slots are held and, where they said, by which pids (and whether those are stopped).
  std::string describe_holders(int fd) const;
  /// How many slots are free and how many are held by a stopped process, a snapshot.
  struct SlotCensus {
    unsigned free = 0;
    unsigned held_by_stopped = 0;
  };
  SlotCensus census(int fd) const;

  unsigned limit_ = 0;
  std::chrono::milliseconds max_wait_;
  std::string slot_file_;
  std::string disabled_reason_;
  std::string wake_fifo_;  ///< empty when the FIFO could not be made: waiters then only poll
};

}  // namespace hipacm::backend
