// SPDX-License-Identifier: MIT
// status_strings.cpp - the fixed names of hipacm_status values.
#include <hipacm/hipacm.h>

extern "C" HIPACM_API const char* hipacm_status_string(hipacm_status status) {
  switch (status) {
    case HIPACM_SUCCESS:
      return "HIPACM_SUCCESS";
    case HIPACM_ERROR_INVALID_ARGUMENT:
      return "HIPACM_ERROR_INVALID_ARGUMENT";
    case HIPACM_ERROR_ABI_MISMATCH:
      return "HIPACM_ERROR_ABI_MISMATCH";
    case HIPACM_ERROR_MODE_ALREADY_ACTIVE:
      return "HIPACM_ERROR_MODE_ALREADY_ACTIVE";
    case HIPACM_ERROR_MODE_CLOSED:
      return "HIPACM_ERROR_MODE_CLOSED";
    case HIPACM_ERROR_COMPILATION:
      return "HIPACM_ERROR_COMPILATION";
    case HIPACM_ERROR_COMPILER_CRASHED:
      return "HIPACM_ERROR_COMPILER_CRASHED";
    case HIPACM_ERROR_TIMEOUT:
      return "HIPACM_ERROR_TIMEOUT";
    case HIPACM_ERROR_CANCELLED:
      return "HIPACM_ERROR_CANCELLED";
    case HIPACM_ERROR_BACKEND_UNAVAILABLE:
      return "HIPACM_ERROR_BACKEND_UNAVAILABLE";
    case HIPACM_ERROR_FINALIZE_FAILED:
      return "HIPACM_ERROR_FINALIZE_FAILED";
    case HIPACM_ERROR_NOT_READY:
      return "HIPACM_ERROR_NOT_READY";
    case HIPACM_ERROR_OUT_OF_MEMORY:
      return "HIPACM_ERROR_OUT_OF_MEMORY";
    case HIPACM_ERROR_INTERNAL:
      return "HIPACM_ERROR_INTERNAL";
  }
  return "HIPACM_ERROR_UNKNOWN_STATUS";
}
