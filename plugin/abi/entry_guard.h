// SPDX-License-Identifier: MIT
// entry_guard.h - the try/catch wrapper that every C entry point runs its body in.
#pragma once

#include <hipacm/hipacm.h>

#include <string>

#include "plugin/abi/last_error.h"
#include "support/failure.h"
#include "support/status_error.h"

namespace hipacm {

/// Records `failure` as this thread's last error and returns its status.
inline hipacm_status record_failure(const Failure& failure) noexcept {
  set_last_error(failure.message);
  return failure.status;
}

/// Runs `body` (returning hipacm_status) so that nothing escapes to the host; the exception in
/// flight becomes a status (support/failure.h). A StatusError, which hipacm raises on purpose,
/// records "<function>: <message>"; anything else records its own message ("out of memory"
/// for bad_alloc).
template <class Body>
hipacm_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const StatusError&) {
    return record_failure(failure_from_current_exception(function));
  } catch (...) {
    return record_failure(failure_from_current_exception());
  }
}

/// Records `message` for a status that a body returns instead of throwing
/// (a compile outcome is a result, not an exception).
inline hipacm_status report(hipacm_status status, const char* function,
                            const std::string& message) noexcept {
  if (status != HIPACM_SUCCESS) {
    try {
      set_last_error(std::string(function) + ": " + message);
    } catch (...) {
      set_last_error(message);
    }
  }
  return status;
}

}  // namespace hipacm
