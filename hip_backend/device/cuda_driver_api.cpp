// SPDX-License-Identifier: MIT
// cuda_driver_api.cpp - finds, binds and initializes the CUDA driver at run time, once per process.
#include "hip_backend/device/cuda_driver_api.h"

#include "support/libraries/lazy_library.h"
#include "support/no_destructor.h"
#include "support/settings.h"

namespace hipacm::backend {

namespace {

// Pinned (the default): the driver starts threads that run its code until exit.
LibrarySearch cuda_driver_search() {
  return {.name = "CUDA driver",
          .override_variable = settings::name(settings::Id::kCudaDriverLibrary),
          .defaults = {"libcuda.so.1"},
          .not_found = "no CUDA driver"};
}

void bind_cuda_driver(SymbolBinder& binder, CudaDriverApi* api) {
#define HIPACM_BIND_FIELD(field, exported, ret, params) binder.require(exported, &api->field);
  HIPACM_CUDA_DRIVER_SYMBOLS(HIPACM_BIND_FIELD)
#undef HIPACM_BIND_FIELD
}

// A driver counts as loaded only once cuInit(0) succeeded.
Expected<BoundLibrary<CudaDriverApi>> load_once() {
  auto driver =
      find_library(cuda_driver_search(), cuda_driver_search().candidates(), &bind_cuda_driver);
  if (!driver) return driver;
  if (const cu_result init = driver->api.cuInit(0); init != kCudaSuccess) {
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "cuInit failed: " + cuda_error_text(driver->api, init)};
  }
  return driver;
}

}  // namespace

Expected<const CudaDriverApi*> load_cuda_driver() {
  static NoDestructor<LazyLibrary<CudaDriverApi>> driver("cannot load the CUDA driver", &load_once);
  return driver->api();
}

std::string cuda_error_text(const CudaDriverApi& api, cu_result result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName != nullptr) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString != nullptr) api.cuGetErrorString(result, &text);
  std::string out = name != nullptr ? name : "CUresult " + std::to_string(result);
  if (text != nullptr) out += std::string(" (") + text + ")";
  return out;
}

}  // namespace hipacm::backend
