// SPDX-License-Identifier: MIT
// status_error.h - the exception that carries a hipacm_status up to where it becomes a result.
#pragma once

#include <hipacm/hipacm.h>

#include <stdexcept>
#include <string>

namespace hipacm {

/// Thrown for any failure that has a status; the C entry points and the compile paths turn it
/// into a status and message (failure_from_current_exception). It never crosses the C boundary.
class StatusError : public std::runtime_error {
 public:
  StatusError(hipacm_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  hipacm_status status() const noexcept { return status_; }

 private:
  hipacm_status status_;
};

}  // namespace hipacm
