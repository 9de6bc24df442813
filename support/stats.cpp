// SPDX-License-Identifier: MIT
// stats.cpp - the storage of the process-wide event counters.
#include "support/stats.h"

namespace hipacm::backend {

StatsCounters& stats() noexcept {
  // Atomics of integers have constexpr constructors and trivial destructors,
  // so this is constant-initialised and never destroyed at exit.
  static constinit StatsCounters counters;
  return counters;
}

}  // namespace hipacm::backend
