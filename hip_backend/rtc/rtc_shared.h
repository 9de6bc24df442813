// SPDX-License-Identifier: MIT
// rtc_shared.h - what hipRTC and NVRTC share: hipRTC copies NVRTC's C API, its entry points,
// result codes and their names.
#pragma once

#include <array>
#include <cstddef>
#include <string>

// X-macro: (name, value) of the result codes the backend maps to hipacm statuses. hiprtcResult
// and nvrtcResult give each the same value; hiprtc_internal.h and nvrtc_api.h make kHiprtc<name>
// and kNvrtc<name> from this one list.
#define HIPACM_RTC_RESULT_CODES(X)   \
  X(Success, 0)                      \
  X(ErrorOutOfMemory, 1)             \
  X(ErrorInvalidInput, 3)            \
  X(ErrorInvalidOption, 5)           \
  X(ErrorCompilation, 6)             \
  X(ErrorBuiltinOperationFailure, 7) \
  X(ErrorNameExpressionNotValid, 10)

// X-macro part: (name, return type, parameter list) of the entry points that both libraries have
// with the same parameters, for a table whose names start with `prefix` (hiprtc, nvrtc) and whose
// result and program types are `result` and `program`. Create and compile differ (const-ness).
#define HIPACM_RTC_SHARED_SYMBOLS(X, prefix, result, program)             \
  X(prefix##GetErrorString, const char*, (result))                        \
  X(prefix##Version, result, (int*, int*))                                \
  X(prefix##DestroyProgram, result, (program*))                           \
  X(prefix##AddNameExpression, result, (program, const char*))            \
  X(prefix##GetLoweredName, result, (program, const char*, const char**)) \
  X(prefix##GetProgramLogSize, result, (program, std::size_t*))           \
  X(prefix##GetProgramLog, result, (program, char*))

namespace hipacm::backend {

/// The result codes' names without their "HIPRTC_"/"NVRTC_" prefix, in NVRTC's order; hipRTC
/// (5.2.3 to 7.x) names the first kHiprtcResultCount, up to INTERNAL_ERROR, with the same values.
inline constexpr std::array<const char*, 18> kRtcResultSuffixes = {
    "SUCCESS",
    "ERROR_OUT_OF_MEMORY",
    "ERROR_PROGRAM_CREATION_FAILURE",
    "ERROR_INVALID_INPUT",
    "ERROR_INVALID_PROGRAM",
    "ERROR_INVALID_OPTION",
    "ERROR_COMPILATION",
    "ERROR_BUILTIN_OPERATION_FAILURE",
    "ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
    "ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
    "ERROR_NAME_EXPRESSION_NOT_VALID",
    "ERROR_INTERNAL_ERROR",
    "ERROR_TIME_FILE_WRITE_FAILED",
    "ERROR_NO_PCH_CREATE_ATTEMPTED",
    "ERROR_PCH_CREATE_HEAP_EXHAUSTED",
    "ERROR_PCH_CREATE",
    "ERROR_CANCELLED",
    "ERROR_TIME_TRACE_FILE_WRITE_FAILED"};
inline constexpr std::size_t kHiprtcResultCount = 12;

/// "<prefix>_ERROR_COMPILATION" and so on for the first `known` codes (hipRTC names 12 of them,
/// NVRTC 18), from a local table: naming a result never needs the library. Any other value is
/// "<type_name> <value>".
inline std::string rtc_result_name(const char* prefix, const char* type_name, int result,
                                   std::size_t known) {
  if (result >= 0 && static_cast<std::size_t>(result) < known &&
      static_cast<std::size_t>(result) < kRtcResultSuffixes.size())
    return std::string(prefix) + "_" + kRtcResultSuffixes[static_cast<std::size_t>(result)];
  return std::string(type_name) + " " + std::to_string(result);
}

}  // namespace hipacm::backend
