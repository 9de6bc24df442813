// SPDX-License-Identifier: MIT
// machine_budget.h - the per-user, machine-wide limit on compiling workers: slots that every
// hipacm process of a user on one machine shares, held while a worker compiles.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "support/unique_fd.h"

namespace hipacm::backend {

/// Where a budget lives and how big it is.
struct MachineBudgetConfig {
  /// How many workers of this user may compile at once on this machine; 0 = no limit.
  unsigned limit = 0;
  /// The private directory that holds the slot file (made 0700 when missing).
  std::string runtime_dir;

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

 private:
  friend class MachineBudget;
  void release() noexcept;

  UniqueFd fd_;  ///< its own open file description: OFD locks belong to descriptions
  std::int64_t index_ = -1;
  const std::string* wake_fifo_ = nullptr;  ///< the budget's FIFO, written when the slot frees
  std::uint64_t epoch_ = 0;                 ///< fork epoch of the process that took it
};

/// Slots are one-byte open-file-description locks (F_OFD_SETLK) on `<runtime_dir>/worker-slots`,
/// so the kernel frees a slot however its holder dies: no daemon, nothing to clean up, and a
/// killed process never shrinks the budget. A process that finds every slot taken sleeps on a
/// FIFO beside the file, which every release writes one byte to, so a freed slot is taken within
/// a context switch rather than a polling interval; a slow poll covers holders that died.
///
/// Processes may name different limits: a process uses slots 0 .. its limit - 1, so all of them
/// together never run more than the largest limit among them.
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
  /// limit. Never throws except std::bad_alloc.
  MachineSlot acquire();

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
  static void wait_for_release(int wake) noexcept;

  unsigned limit_ = 0;
  std::string slot_file_;
  std::string disabled_reason_;
  std::string wake_fifo_;  ///< empty when the FIFO could not be made: waiters then only poll
};

}  // namespace hipacm::backend
