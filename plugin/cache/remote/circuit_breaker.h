// SPDX-License-Identifier: MIT
// circuit_breaker.h - stops asking a remote service for a while after repeated failures, so a
// service that is down costs each compile nothing once it is known to be down.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace hipacm::cache::remote {

/// Closed: every call is allowed. After `threshold` failures in a row it opens for `cool_down`,
/// allowing none; then one caller at a time is let through (half-open) until one succeeds.
/// Thread-safe and lock-free.
class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  CircuitBreaker(unsigned threshold, std::chrono::milliseconds cool_down) noexcept
      : threshold_(threshold), cool_down_(cool_down) {}

  /// Whether a call may be made now.
  bool allow() noexcept {
    const std::int64_t until = open_until_.load(std::memory_order_acquire);
    if (until == 0) return true;
    const std::int64_t now = ticks(Clock::now());
    if (now < until) return false;
    // Half-open: one probe per cool-down, the one that moves the deadline on.
    std::int64_t expected = until;
    return open_until_.compare_exchange_strong(expected, now + cool_down_ticks(),
                                               std::memory_order_acq_rel);
  }
  void succeeded() noexcept {
    failures_.store(0, std::memory_order_relaxed);
    open_until_.store(0, std::memory_order_release);
  }
  /// Counts a failure; true when this one opened the breaker (the caller says so once).
  bool failed() noexcept {
    const unsigned failures = failures_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (failures < threshold_) return false;
    std::int64_t expected = 0;
    const std::int64_t until = ticks(Clock::now()) + cool_down_ticks();
    if (open_until_.compare_exchange_strong(expected, until, std::memory_order_acq_rel))
      return true;
    // Already open (a failed half-open probe): keep it open from now.
    open_until_.store(until, std::memory_order_release);
    return false;
  }
  bool open() const noexcept { return open_until_.load(std::memory_order_acquire) != 0; }

 private:
  static std::int64_t ticks(Clock::time_point at) noexcept {
    // Never 0, which means closed.
    return std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count() | 1;
  }
  std::int64_t cool_down_ticks() const noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(cool_down_).count();
  }
  const unsigned threshold_;
  const std::chrono::milliseconds cool_down_;
  std::atomic<unsigned> failures_{0};
  std::atomic<std::int64_t> open_until_{0};  ///< microseconds of Clock; 0 while closed
};

}  // namespace hipacm::cache::remote
