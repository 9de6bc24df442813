// SPDX-License-Identifier: MIT
// machine_budget.cpp - per-user compile slots: OFD locks on one file, a FIFO to wake waiters.
#include "hip_backend/machine/machine_budget.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <new>
#include <utility>

#include "hip_backend/machine/runtime_dir.h"
#include "hip_backend/process/worker_fd_registry.h"
#include "support/files/file_lock.h"
#include "support/files/private_file.h"
#include "support/fork_epoch.h"
#include "support/log.h"
#include "support/no_destructor.h"
#include "support/settings.h"

namespace hipacm::backend {
namespace {

// More would only mean "no limit" on any machine this runs on, and keeps offsets small.
constexpr unsigned kMaxLimit = 65536;
// How long a waiter sleeps when no release wakes it: the slot of a holder that died frees
// without a wake-up byte, and a waiter with a smaller limit may have let another's byte go by.
constexpr int kFallbackPollMs = 100;
// Where holders write their pids: one 4-byte record per slot, past every slot's lock byte.
constexpr off_t kPidRecords = kMaxLimit;
// How often a waiter looks again at once because a slot seemed free after a failed look; past
// that it sleeps as usual (a slot that looks free but cannot be locked must not spin).
constexpr int kFreeRetries = 16;
// How many holders a message names.
constexpr int kHoldersNamed = 4;

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds millis(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

/// Whether process `pid` is stopped (state T, or t when traced), from /proc/<pid>/stat.
bool stopped(std::int32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto paren = line.rfind(')');  // the command name may hold anything, ')' included
  return paren != std::string::npos && paren + 2 < line.size() &&
         (line[paren + 2] == 'T' || line[paren + 2] == 't');
}

unsigned online_cpus() noexcept {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(std::min<long>(n, kMaxLimit)) : 1;
}

/// Opens `path` as this user's regular file (or FIFO), never through a link, and never blocking
/// on a FIFO planted where the slot file belongs.
UniqueFd open_owned(const std::string& path, mode_t kind, int flags) {
  return open_private_file(path, flags, kind);
}

/// open_owned(), registered so that a fork()ed child closes its copy (see WorkerFdRegistry):
/// a child's copy of a slot would hold it, and of the FIFO would look like a waiter.
UniqueFd open_registered(const std::string& path, mode_t kind, int flags) {
  auto registry = WorkerFdRegistry::lock();
  UniqueFd fd = open_owned(path, kind, flags);
  if (fd.valid()) WorkerFdRegistry::add_locked(fd.get());
  return fd;
}

}  // namespace

MachineBudgetConfig MachineBudgetConfig::from_environment(std::string* warning) {
  MachineBudgetConfig config;
  config.limit = online_cpus();
  const settings::Parsed<std::optional<unsigned>> jobs = settings::machine_jobs(config.limit);
  if (jobs.value) config.limit = std::min(*jobs.value, kMaxLimit);
  if (warning && !jobs.problem.empty()) *warning = jobs.problem;
  config.runtime_dir = runtime_dir_from_environment();
  return config;
}

MachineSlot::MachineSlot(MachineSlot&& other) noexcept
    : fd_(std::move(other.fd_)),
      lock_(std::move(other.lock_)),
      index_(other.index_),
      wake_fifo_(other.wake_fifo_),
      epoch_(other.epoch_),
      timed_out_(other.timed_out_),
      over_budget_(other.over_budget_),
      waited_(other.waited_),
      wait_reason_(std::move(other.wait_reason_)) {}

MachineSlot& MachineSlot::operator=(MachineSlot&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::move(other.fd_);
    lock_ = std::move(other.lock_);
    index_ = other.index_;
    wake_fifo_ = other.wake_fifo_;
    epoch_ = other.epoch_;
    timed_out_ = other.timed_out_;
    over_budget_ = other.over_budget_;
    waited_ = other.waited_;
    wait_reason_ = std::move(other.wait_reason_);
  }
  return *this;
}

MachineSlot::~MachineSlot() { release(); }

void MachineSlot::release() noexcept {
  if (!fd_.valid()) return;
  if (epoch_ != fork_epoch()) {
    // Taken in a parent: the worker descriptor registry closed our copy in this child, and the
    // number may name another file by now. The parent still holds the slot.
    lock_.abandon();
    fd_.release();
    return;
  }
  // Unlock explicitly: a fork()ed child may still share this description, and its copy of the
  // descriptor would otherwise keep the slot held. The pid record goes first, while it is ours.
  const std::int32_t nobody = 0;
  [[maybe_unused]] const ssize_t cleared =
      ::pwrite(fd_.get(), &nobody, sizeof nobody, kPidRecords + index_ * 4);
  lock_.unlock();
  WorkerFdRegistry::close(fd_);
  if (wake_fifo_ != nullptr && !wake_fifo_->empty()) {
    // Read and write: a write-only end could outlive the last waiter's read end between the open
    // and the write, and a write into a FIFO nobody reads raises SIGPIPE, which kills a host that
    // has not ignored it. Holding a read end ourselves, the write never fails that way; with no
    // waiter the byte goes with the FIFO's buffer when we close.
    UniqueFd wake = open_registered(*wake_fifo_, S_IFIFO, O_RDWR | O_NONBLOCK);
    const char byte = 1;
    // Non-blocking: a full FIFO already holds more wake-ups than anyone needs.
    if (wake.valid()) {
      [[maybe_unused]] const ssize_t n = ::write(wake.get(), &byte, 1);
    }
    WorkerFdRegistry::close(wake);
  }
}

MachineBudget::MachineBudget(MachineBudgetConfig config)
    : limit_(config.limit), max_wait_(config.max_wait) {
  if (limit_ == 0) return;
  if (config.runtime_dir.empty() || config.runtime_dir.front() != '/') {
    disable("its runtime directory '" + config.runtime_dir + "' is not an absolute path");
    return;
  }
  if (Expected<void> made = make_runtime_directory(config.runtime_dir); !made) {
    disable(std::move(made).failure().message);
    return;
  }
  const std::string file = config.runtime_dir + "/worker-slots";
  UniqueFd probe = open_owned(file, S_IFREG, O_RDWR | O_CREAT);
  if (!probe.valid()) {
    disable("cannot open " + file + " as this user's own regular file");
    return;
  }
  if (!locked_elsewhere(probe.get(), LockRange::byte(0))) {
    disable("the file system of " + file + " has no open-file-description locks");
    return;
  }
  slot_file_ = file;
  const std::string fifo = file + ".wake";
  struct stat st {};
  if ((::mkfifo(fifo.c_str(), 0600) == 0 || errno == EEXIST) && ::lstat(fifo.c_str(), &st) == 0 &&
      S_ISFIFO(st.st_mode) && st.st_uid == ::geteuid()) {
    wake_fifo_ = fifo;
  } else {
    log(LogLevel::kDebug, "no wake-up FIFO " + fifo + ": waiters for a slot poll instead");
  }
}

void MachineBudget::disable(std::string reason) noexcept {
  limit_ = 0;
  disabled_reason_ = std::move(reason);
  log_once(LogLevel::kWarning, "machine-budget",
           "the machine-wide worker budget is off: " + disabled_reason_);
}

MachineBudget& MachineBudget::instance() {
  // Not a function-local static: fork() could copy its guard half-taken (see ForkSafeOnce).
  alignas(
      NoDestructor<MachineBudget>) static unsigned char buffer[sizeof(NoDestructor<MachineBudget>)];
  static constinit ForkSafeOnce once;
  once.call([] {
    std::string warning;
    MachineBudgetConfig config = MachineBudgetConfig::from_environment(&warning);
    if (!warning.empty()) log(LogLevel::kWarning, warning);
    ::new (static_cast<void*>(buffer)) NoDestructor<MachineBudget>(std::move(config));
  });
  return **std::launder(reinterpret_cast<NoDestructor<MachineBudget>*>(buffer));
}

MachineSlot MachineBudget::acquire(std::optional<Clock::time_point> deadline) {
  MachineSlot slot;
  if (limit_ == 0) return slot;
  slot.fd_ = open_registered(slot_file_, S_IFREG, O_RDWR);
  if (!slot.fd_.valid()) {
    log_once(LogLevel::kWarning, "machine-budget-open",
             "cannot open " + slot_file_ + ": compiling without the machine-wide worker budget");
    return slot;
  }
  slot.wake_fifo_ = &wake_fifo_;
  slot.epoch_ = fork_epoch();
  // Start at a different slot in each call, so that waiters do not all fight over slot 0.
  static std::atomic<unsigned> next{0};
  const unsigned start =
      (next.fetch_add(1, std::memory_order_relaxed) + static_cast<unsigned>(::getpid())) % limit_;
  // Open only while this thread waits: releases find a reader and write. Open before each look,
  // so a slot freed between a failed look and the sleep still leaves a byte to wake on. O_RDWR:
  // a read end with no writer would report POLLHUP for ever.
  UniqueFd wake;
  const Clock::time_point began = Clock::now();
  // A holder that is stopped never gives its slot back: the wait is bounded either way.
  const Clock::time_point give_up = began + max_wait_;
  bool noticed = false;
  int free_retries = 0;
  for (;;) {
    for (unsigned i = 0; i < limit_; ++i) {
      const std::int64_t index = (start + i) % limit_;
      FileLock lock = FileLock::acquire_borrowed(slot.fd_.get(), LockKind::kOpenFileDescription,
                                                 LockRange::byte(index), LockWait::once());
      if (lock.held()) {
        slot.lock_ = std::move(lock);
        slot.index_ = index;
        slot.waited_ = millis(Clock::now() - began);
        const std::int32_t me = static_cast<std::int32_t>(::getpid());
        [[maybe_unused]] const ssize_t noted =
            ::pwrite(slot.fd_.get(), &me, sizeof me, kPidRecords + index * 4);
        WorkerFdRegistry::close(wake);
        if (noticed)
          log(LogLevel::kInfo, "took a machine-wide compile slot after waiting " +
                                   std::to_string(slot.waited_.count()) + " ms");
        return slot;
      }
      if (!lock.busy()) {
        log_once(LogLevel::kWarning, "machine-budget-lock",
                 std::string("cannot lock a slot of ") + slot_file_ + ": " +
                     std::strerror(lock.error()) +
                     "; compiling without the machine-wide worker budget");
        WorkerFdRegistry::close(wake);
        WorkerFdRegistry::close(slot.fd_);
        return MachineSlot();
      }
    }
    if (!wake.valid() && !wake_fifo_.empty()) {
      wake = open_registered(wake_fifo_, S_IFIFO, O_RDWR | O_NONBLOCK);
      if (wake.valid()) continue;  // look once more, now that a release would wake us
    }
    const Clock::time_point now = Clock::now();
    const SlotCensus seen = census(slot.fd_.get());
    if (seen.free > 0 && free_retries++ < kFreeRetries) continue;  // one freed since: take it
    if (seen.held_by_stopped > 0) {
      // A stopped holder runs nothing and may stay stopped for hours: its slot is not the
      // machine's CPUs being busy, so waiting for it would only stall this compile.
      MachineSlot empty;
      empty.over_budget_ = true;
      empty.waited_ = millis(now - began);
      empty.wait_reason_ = describe_holders(slot.fd_.get());
      WorkerFdRegistry::close(wake);
      WorkerFdRegistry::close(slot.fd_);
      log_once(LogLevel::kWarning, "machine-budget-stopped",
               "a machine-wide compile slot is held by a stopped process (" + empty.wait_reason_ +
                   "): compiling over the budget while it stays stopped");
      log(LogLevel::kDebug, "compiling over the machine-wide budget: " + empty.wait_reason_);
      return empty;
    }
    const bool timed_out = deadline && now >= *deadline;
    if (timed_out || now >= give_up) {
      // Nothing is held: the slot's descriptors go, and the caller ends or goes over budget.
      MachineSlot empty;
      empty.timed_out_ = timed_out;
      empty.over_budget_ = !timed_out;
      empty.waited_ = millis(now - began);
      empty.wait_reason_ = describe_holders(slot.fd_.get());
      WorkerFdRegistry::close(wake);
      WorkerFdRegistry::close(slot.fd_);
      if (!timed_out)
        log(LogLevel::kWarning, "waited " + std::to_string(empty.waited_.count()) +
                                    " ms for a machine-wide compile slot (" + empty.wait_reason_ +
                                    "); compiling over the budget");
      return empty;
    }
    if (!noticed && now - began >= kSlotWaitNotice) {
      noticed = true;
      const bool times_out = deadline && *deadline < give_up;
      const Clock::time_point end = times_out ? *deadline : give_up;
      log(LogLevel::kInfo,
          "waiting for a machine-wide compile slot: " + describe_holders(slot.fd_.get()) +
              "; at most " + std::to_string(millis(end - now).count()) + " ms more, then " +
              (times_out ? "the compile times out" : "it compiles over the budget"));
    }
    // Never past the deadline, the give-up time or the notice by more than a fallback poll.
    Clock::time_point until = std::min(give_up, deadline.value_or(give_up));
    if (!noticed) until = std::min(until, began + kSlotWaitNotice);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
    wait_for_release(wake.get(), static_cast<int>(std::clamp<long long>(left, 1, kFallbackPollMs)));
  }
}

MachineBudget::SlotCensus MachineBudget::census(int fd) const {
  SlotCensus seen;
  for (unsigned i = 0; i < limit_; ++i) {
    const std::optional<bool> locked = locked_elsewhere(fd, LockRange::byte(i));
    if (!locked) continue;  // cannot tell: count it as busy
    if (!*locked) {
      ++seen.free;
      continue;
    }
    std::int32_t pid = 0;
    // A holder that has not written its pid yet (or whose pid is gone) counts as running.
    if (::pread(fd, &pid, sizeof pid, kPidRecords + static_cast<off_t>(i) * 4) ==
            static_cast<ssize_t>(sizeof pid) &&
        pid > 0 && stopped(pid)) {
      ++seen.held_by_stopped;
    }
  }
  return seen;
}

std::string MachineBudget::describe_holders(int fd) const {
  unsigned held = 0;
  std::string pids;
  int named = 0;
  for (unsigned i = 0; i < limit_; ++i) {
    const std::optional<bool> locked = locked_elsewhere(fd, LockRange::byte(i));
    if (!locked || !*locked) continue;
    ++held;
    std::int32_t pid = 0;
    if (named >= kHoldersNamed ||
        ::pread(fd, &pid, sizeof pid, kPidRecords + static_cast<off_t>(i) * 4) !=
            static_cast<ssize_t>(sizeof pid) ||
        pid <= 0) {
      continue;
    }
    pids += (named++ == 0 ? "" : ", ") + std::to_string(pid) + (stopped(pid) ? " (stopped)" : "");
  }
  std::string text = std::to_string(held) + " of the " + std::to_string(limit_) + " slots of " +
                     settings::name(settings::Id::kMachineJobs) + " held in " + slot_file_;
  if (!pids.empty()) text += ", by pid " + pids;
  return text;
}

void MachineBudget::wait_for_release(int wake, int max_ms) noexcept {
  if (wake < 0) {
    ::poll(nullptr, 0, std::min(max_ms, kFallbackPollMs / 10));
    return;
  }
  pollfd fifo{wake, POLLIN, 0};
  for (;;) {
    const int ready = ::poll(&fifo, 1, max_ms);
    if (ready <= 0) return;  // the slow poll, or a signal: look again
    char byte = 0;
    // One byte stands for one freed slot: whoever reads it looks; the others sleep on.
    if (::read(wake, &byte, 1) == 1) return;
  }
}

std::string slot_wait_timeout_message(const std::string& what, std::chrono::milliseconds limit,
                                      const MachineSlot& slot) {
  return "compile of " + what + " timed out after " + std::to_string(limit.count()) +
         " ms waiting for a machine-wide compile slot (" + slot.wait_reason() +
         "): a stopped or long compile of this user holds it";
}

std::optional<unsigned> MachineBudget::slots_in_use() const {
  if (limit_ == 0) return std::nullopt;
  UniqueFd fd = open_owned(slot_file_, S_IFREG, O_RDONLY);
  if (!fd.valid()) return std::nullopt;
  unsigned held = 0;
  for (unsigned i = 0; i < limit_; ++i) {
    const std::optional<bool> locked = locked_elsewhere(fd.get(), LockRange::byte(i));
    if (!locked) return std::nullopt;
    held += *locked ? 1 : 0;
  }
  return held;
}

}  // namespace hipacm::backend
