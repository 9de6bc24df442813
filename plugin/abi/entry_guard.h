// entry_guard.h - the try/catch wrapper that every C entry point runs its body in.
#pragma once

#include <hipacm/hipacm.h>

#include <exception>
#include <new>
#include <string>

#include "support/status_error.h"
#include "plugin/abi/last_error.h"

namespace hipacm {

/// Runs `body` (returning hipacm_status) so that nothing escapes to the host:
/// hipacm::StatusError becomes its status, bad_alloc OUT_OF_MEMORY, anything else
/// INTERNAL; each failure records "<function>: <message>" as the last error.
template <class Body>
hipacm_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const StatusError& e) {
    try {
      set_last_error(std::string(function) + ": " + e.what());
    } catch (...) {
      set_last_error(e.what());
    }
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory");
    return HIPACM_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return HIPACM_ERROR_INTERNAL;
  } catch (...) {
    set_last_error("unknown internal error");
    return HIPACM_ERROR_INTERNAL;
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
