// error.h - the internal exception that carries a hipacm_status to the ABI boundary.
#pragma once

#include <hipacm/hipacm.h>

#include <stdexcept>
#include <string>

namespace hipacm {

/// Thrown inside the plugin for any failure that has a status; entry points
/// turn it into a return value and the thread-local message. It never
/// crosses the C boundary.
class Error : public std::runtime_error {
 public:
  Error(hipacm_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  hipacm_status status() const noexcept { return status_; }

 private:
  hipacm_status status_;
};

}  // namespace hipacm
