// SPDX-License-Identifier: MIT
// failure.cpp - turns the exception in flight into a status and message, written once.
#include "support/failure.h"

#include <exception>
#include <new>
#include <stdexcept>

#include "support/status_error.h"

namespace hipacm {

namespace {

Failure make(hipacm_status status, std::string_view context, std::string_view what) noexcept {
  Failure failure;
  failure.status = status;
  try {
    if (!context.empty()) {
      failure.message.reserve(context.size() + 2 + what.size());
      failure.message.append(context).append(": ");
    }
    failure.message.append(what);
  } catch (...) {
    // Out of memory while describing the failure: the message without its context, else the
    // status alone, still tells the truth.
    try {
      failure.message.assign(what);
    } catch (...) {
      failure.message.clear();
    }
  }
  return failure;
}

}  // namespace

Failure failure_from_current_exception(std::string_view context) noexcept {
  try {
    throw;
  } catch (const StatusError& e) {
    return make(e.status(), context, e.what());
  } catch (const std::bad_alloc&) {
    return make(HIPACM_ERROR_OUT_OF_MEMORY, context, "out of memory");
  } catch (const std::exception& e) {
    return make(HIPACM_ERROR_INTERNAL, context, e.what());
  } catch (...) {
    return make(HIPACM_ERROR_INTERNAL, context, "unknown exception");
  }
}

}  // namespace hipacm
