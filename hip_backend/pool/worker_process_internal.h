// SPDX-License-Identifier: MIT
// worker_process_internal.h - what the parts of WorkerProcess share: its deadline, errno's
// text, and whether workers are ordered from the compile service.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "hip_backend/pool/worker_process.h"

namespace hipacm::backend {

/// A point in time to give up at; `none` means wait forever.
struct WorkerProcess::Deadline {
  using Clock = std::chrono::steady_clock;
  bool none = true;
  Clock::time_point at;

  explicit Deadline(std::uint32_t timeout_ms)
      : none(timeout_ms == 0), at(Clock::now() + std::chrono::milliseconds(timeout_ms)) {}

  /// A poll() timeout: -1 for none, else the milliseconds left, rounded up.
  int poll_timeout() const {
    if (none) return -1;
    const auto left = at - Clock::now();
    if (left <= Clock::duration::zero()) return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<int>(std::min<long long>(ms, std::numeric_limits<int>::max()));
  }
  bool passed() const { return !none && Clock::now() >= at; }
};

namespace worker_process_internal {

inline std::string errno_text(int err) { return std::strerror(err); }

/// Whether to order from the service; an unknown setting is said once, and reads as off
/// (worker_from_service.cpp).
bool use_compile_service();

}  // namespace worker_process_internal
}  // namespace hipacm::backend
