// SPDX-License-Identifier: MIT
// warm_set.h - compiles every example through one hipacm mode and keeps the futures' kernels.
#pragma once

#include <hipacm/hipacm.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/common/example_kernels.h"

namespace hipacm::device {

using ExampleSource = bench::KernelSource;

/// The outcome of warming one example.
struct WarmedExample {
  hipacm::Status status = hipacm::Status::Internal;
  std::string message;                    ///< error message and log when the compile failed
  const hipacm_kernel* kernel = nullptr;  ///< owned by `future`; valid while it lives
  hipacm::Future future;
};

/// What the mode did, for the report.
struct WarmReport {
  hipacm::Status enter_status = hipacm::Status::Success;
  std::string enter_message;
  hipacm::Status exit_status = hipacm::Status::Success;
  std::string exit_message;
  double seconds = 0.0;
  std::map<std::string, WarmedExample> by_file;
};

/// Enters a mode for `arch` (load_device as given, isolation as given), submits every example,
/// exits the mode (which collects them all) and returns each one's outcome.
WarmReport warm_examples(const std::vector<ExampleSource>& set, const std::string& arch,
                         std::int32_t load_device, hipacm::Isolation isolation);

}  // namespace hipacm::device
