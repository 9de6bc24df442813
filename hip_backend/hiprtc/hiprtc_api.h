// SPDX-License-Identifier: MIT
// hiprtc_api.h - the hipRTC entry points, loaded at run time with dlopen/dlsym.
#pragma once

#include <cstddef>
#include <string>

#include "hip_backend/rtc/rtc_shared.h"
#include "support/failure.h"
#include "support/libraries/lazy_library.h"

namespace hipacm::backend {

// Mirrors of hipRTC's C types, so the plugin builds and loads without ROCm.
using hiprtc_result = int;  // hiprtcResult; 0 = HIPRTC_SUCCESS
using hiprtc_program = struct hiprtc_program_opaque*;

// X-macro: (name, return type, parameter list). Listed once; the table's fields and the dlsym
// calls are both generated from it. hiprtcGetErrorString comes first.
#define HIPACM_HIPRTC_SYMBOLS(X)                                                  \
  HIPACM_RTC_SHARED_SYMBOLS(X, hiprtc, hiprtc_result, hiprtc_program)             \
  X(hiprtcCreateProgram, hiprtc_result,                                           \
    (hiprtc_program*, const char*, const char*, int, const char**, const char**)) \
  X(hiprtcCompileProgram, hiprtc_result, (hiprtc_program, int, const char**))     \
  X(hiprtcGetCodeSize, hiprtc_result, (hiprtc_program, std::size_t*))             \
  X(hiprtcGetCode, hiprtc_result, (hiprtc_program, char*))

/// The loaded hipRTC library. Lives until process exit once loaded.
struct HiprtcApi {
  HIPACM_HIPRTC_SYMBOLS(HIPACM_LIBRARY_FIELD)
  std::string library_path;  ///< the file that was opened
  std::string version;       ///< "major.minor" from hiprtcVersion
};

/// Loads hipRTC once per process (thread-safe). Tries $HIPACM_HIPRTC_LIBRARY
/// alone when set; otherwise libhiprtc.so.7, .6, .5, libhiprtc.so, then ROCm 5's
/// libamdhip64.so.5, each in $ROCM_PATH/$HIP_PATH, the linker's path and
/// /opt/rocm* (rocm_paths.h), stopping at the first library that opens.
/// Otherwise a failure (BACKEND_UNAVAILABLE; distinct messages for "no library" and
/// "missing symbol", each with dlerror()). The table lives until process exit.
Expected<const HiprtcApi*> load_hiprtc();

}  // namespace hipacm::backend
