// SPDX-License-Identifier: MIT
// error.hpp - hipacm::Status and hipacm::Error: a failed call or compile, seen from C++.
#ifndef HIPACM_CPP_ERROR_HPP
#define HIPACM_CPP_ERROR_HPP

#include <hipacm/hipacm.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace hipacm {

namespace detail {

inline std::string to_string(const char* s) {
  return s != nullptr ? std::string(s) : std::string();
}

inline void log_line(const char* what, const char* extra = "") noexcept {
  std::fprintf(stderr, "hipacm: %s%s\n", what, extra);
}

}  // namespace detail

/// hipacm_status as a scoped enum; the numbers are fixed by the ABI.
enum class Status : int {
  Success = HIPACM_SUCCESS,
  InvalidArgument = HIPACM_ERROR_INVALID_ARGUMENT,
  AbiMismatch = HIPACM_ERROR_ABI_MISMATCH,
  ModeAlreadyActive = HIPACM_ERROR_MODE_ALREADY_ACTIVE,
  ModeClosed = HIPACM_ERROR_MODE_CLOSED,
  Compilation = HIPACM_ERROR_COMPILATION,
  CompilerCrashed = HIPACM_ERROR_COMPILER_CRASHED,
  Timeout = HIPACM_ERROR_TIMEOUT,
  Cancelled = HIPACM_ERROR_CANCELLED,
  BackendUnavailable = HIPACM_ERROR_BACKEND_UNAVAILABLE,
  FinalizeFailed = HIPACM_ERROR_FINALIZE_FAILED,
  NotReady = HIPACM_ERROR_NOT_READY,
  OutOfMemory = HIPACM_ERROR_OUT_OF_MEMORY,
  Internal = HIPACM_ERROR_INTERNAL,
};

/// "HIPACM_ERROR_COMPILATION" etc.; never NULL.
inline const char* status_string(Status s) noexcept {
  return hipacm_status_string(static_cast<hipacm_status>(s));
}

/// A failed call or compile: status, message, and for a compile its key and log.
class Error : public std::runtime_error {
 public:
  Error(Status status, std::string message, std::string key = {}, std::string log = {})
      : std::runtime_error(message + " (" + status_string(status) + ")"),
        status_(status),
        message_(std::move(message)),
        key_(std::move(key)),
        log_(std::move(log)) {}

  Status status() const noexcept { return status_; }
  /// The plugin's message (hipacm_last_error_message / hipacm_future_error_message).
  const std::string& message() const noexcept { return message_; }
  /// The key of the compile that failed ("" when the error is not a compile's).
  const std::string& key() const noexcept { return key_; }
  /// The compiler log of the compile that failed ("" when none).
  const std::string& log() const noexcept { return log_; }

 private:
  Status status_;
  std::string message_;
  std::string key_;
  std::string log_;
};

namespace detail {

/// An error from the call that just failed on this thread.
inline Error last_error(hipacm_status status) {
  return Error(static_cast<Status>(status), to_string(hipacm_last_error_message()));
}

}  // namespace detail

}  // namespace hipacm

#endif  // HIPACM_CPP_ERROR_HPP
