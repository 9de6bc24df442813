// warm_set.h - compiles every example through one hipacm mode and keeps the futures' kernels.
#pragma once

#include <hipacm/hipacm.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "example_set.h"

namespace hipacm::device {

/// Owns one future reference; releases it on destruction.
struct FutureRef {
  hipacm_future* handle = nullptr;
  explicit FutureRef(hipacm_future* f) : handle(f) {}
  ~FutureRef() {
    if (handle != nullptr) hipacm_future_release(handle);
  }
  FutureRef(const FutureRef&) = delete;
  FutureRef& operator=(const FutureRef&) = delete;
};

/// The outcome of warming one example.
struct WarmedExample {
  hipacm_status status = HIPACM_ERROR_INTERNAL;
  std::string message;                    ///< error message and log when the compile failed
  const hipacm_kernel* kernel = nullptr;  ///< owned by `future`; valid while it lives
  std::unique_ptr<FutureRef> future;
};

/// What the mode did, for the report.
struct WarmReport {
  hipacm_status enter_status = HIPACM_SUCCESS;
  std::string enter_message;
  hipacm_status exit_status = HIPACM_SUCCESS;
  std::string exit_message;
  double seconds = 0.0;
  std::map<std::string, WarmedExample> by_file;
};

/// Enters a mode for `arch` (load_device as given, isolation as given), submits every example,
/// exits the mode (which collects them all) and returns each one's outcome.
WarmReport warm_examples(const std::vector<ExampleSource>& set, const std::string& arch,
                         int32_t load_device, int32_t isolation);

}  // namespace hipacm::device
