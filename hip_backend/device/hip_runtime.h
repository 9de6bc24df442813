// SPDX-License-Identifier: MIT
// hip_runtime.h - the HIP runtime (libamdhip64), found once per process for module loading and
// device queries alike.
#pragma once

#include <string>
#include <vector>

#include "support/libraries/lazy_library.h"

namespace hipacm::backend {

using hip_error = int;  // hipError_t; 0 = hipSuccess
inline constexpr hip_error kHipSuccess = 0;
inline constexpr hip_error kHipErrorOutOfMemory = 2;

// X-macro: (name, return type, parameter list) of the entry points every use needs.
#define HIPACM_HIP_RUNTIME_SYMBOLS(X)                              \
  X(hipGetDeviceCount, hip_error, (int*))                          \
  X(hipGetDevice, hip_error, (int*))                               \
  X(hipSetDevice, hip_error, (int))                                \
  X(hipModuleLoadData, hip_error, (void**, const void*))           \
  X(hipModuleUnload, hip_error, (void*))                           \
  X(hipModuleGetFunction, hip_error, (void**, void*, const char*)) \
  X(hipGetErrorName, const char*, (hip_error))

/// The runtime's entry points. Calls into it hold the ROCm lock (hiprtc/backend_lock.h).
struct HipRuntimeApi {
  HIPACM_HIP_RUNTIME_SYMBOLS(HIPACM_LIBRARY_FIELD)
  /// hipGetDeviceProperties under the name whose hipDeviceProp_t layout matches the HIP headers
  /// hipacm was built with (hip_device_properties_symbol()); null when this runtime lacks it.
  hip_error (*get_device_properties)(void*, int) = nullptr;
  std::string library_path;  ///< the file that was opened
};

/// libamdhip64.so.5, .so.6, then the unversioned name: the one list for every use of the runtime.
std::vector<std::string> hip_runtime_candidates();

/// The runtime, loaded (pinned: once initialized it has threads running its code) on first use.
/// The table lives until process exit; a failure when no candidate opens or one lacks an entry
/// point.
Expected<const HipRuntimeApi*> load_hip_runtime();

/// "hipGetDevicePropertiesR0600" when built with ROCm 6+ headers (ROCm 6 renamed the entry point
/// when the struct changed layout; the plain name keeps the old one), else
/// "hipGetDeviceProperties"; empty without HIP headers.
const char* hip_device_properties_symbol();

/// "hipErrorNoDevice (100)", or "hipError_t (100)" when the runtime cannot name it.
std::string hip_error_text(const HipRuntimeApi& api, hip_error error);

}  // namespace hipacm::backend
