// SPDX-License-Identifier: MIT
// cuda_driver_api.h - the CUDA driver entry points for module loading, dlopen'd from libcuda.so.1.
#pragma once

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

// Mirrors of the driver's C types, so the plugin builds and loads without CUDA.
using cu_result = int;  // CUresult; 0 = CUDA_SUCCESS
using cu_device = int;
using cu_context = struct cu_context_opaque*;
using cu_module = struct cu_module_opaque*;
using cu_function = struct cu_function_opaque*;

inline constexpr cu_result kCudaSuccess = 0;
inline constexpr cu_result kCudaErrorOutOfMemory = 2;
inline constexpr cu_result kCudaErrorNoDevice = 100;
inline constexpr cu_result kCudaErrorInvalidDevice = 101;

// X-macro: (field, exported symbol, return type, parameter list). The
// versioned symbols are what cuda.h's macros resolve the plain names to.
#define HIPACM_CUDA_DRIVER_SYMBOLS(X)                                                              \
  X(cuInit, "cuInit", cu_result, (unsigned int))                                                   \
  X(cuDeviceGetCount, "cuDeviceGetCount", cu_result, (int*))                                       \
  X(cuDeviceGet, "cuDeviceGet", cu_result, (cu_device*, int))                                      \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", cu_result, (cu_context*, cu_device))     \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", cu_result, (cu_device))             \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", cu_result, (cu_context))                              \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", cu_result, (cu_context*))                               \
  X(cuModuleLoadData, "cuModuleLoadData", cu_result, (cu_module*, const void*))                    \
  X(cuModuleUnload, "cuModuleUnload", cu_result, (cu_module))                                      \
  X(cuModuleGetFunction, "cuModuleGetFunction", cu_result, (cu_function*, cu_module, const char*)) \
  X(cuGetErrorName, "cuGetErrorName", cu_result, (cu_result, const char**))                        \
  X(cuGetErrorString, "cuGetErrorString", cu_result, (cu_result, const char**))

/// The loaded driver, initialized (cuInit(0) succeeded). Lives until exit.
struct CudaDriverApi {
#define HIPACM_DECLARE_FIELD(field, symbol, ret, params) ret(*field) params = nullptr;
  HIPACM_CUDA_DRIVER_SYMBOLS(HIPACM_DECLARE_FIELD)
#undef HIPACM_DECLARE_FIELD
  std::string library_path;
};

/// Loads libcuda.so.1 once per process (never the toolkit's link-time stub)
/// and runs cuInit(0). $HIPACM_CUDA_DRIVER_LIBRARY overrides the name.
/// The table lives until process exit; a failure when there is no driver, a
/// symbol is missing, or cuInit fails (e.g. no device).
Expected<const CudaDriverApi*> load_cuda_driver();

/// "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)", or the number
/// when the driver cannot name it.
std::string cuda_error_text(const CudaDriverApi& api, cu_result result);

}  // namespace hipacm::backend
