// cuda_driver_api.cpp - finds, binds and initializes the CUDA driver at run time, once per process.
#include "hip_backend/device/cuda_driver_api.h"

#include <cstdlib>
#include <new>
#include <optional>

#include "support/dynamic_library.h"
#include "support/environment.h"
#include "support/no_destructor.h"

namespace hipacm::backend {

namespace {

struct CachedDriver {
  std::optional<DynamicLibrary> library;
  CudaDriverApi api;
  bool usable = false;
  std::string error;
};

CachedDriver load_once() {
  CachedDriver cached;
  try {
    const std::string name =
        environment_value("HIPACM_CUDA_DRIVER_LIBRARY").value_or("libcuda.so.1");
    std::string open_error;
    // Pinned: the driver starts threads that run its code until exit.
    cached.library = DynamicLibrary::open(name, &open_error, DynamicLibrary::Lifetime::kPinned);
    if (!cached.library) {
      cached.error = "no CUDA driver (" + open_error + ")";
      return cached;
    }
    CudaDriverApi& api = cached.api;
#define HIPACM_BIND_FIELD(field, exported, ret, params)                                 \
  if (!cached.library->bind(exported, &api.field, nullptr)) {                           \
    cached.error = "CUDA driver " + cached.library->path() + " is missing " + exported; \
    return cached;                                                                      \
  }
    HIPACM_CUDA_DRIVER_SYMBOLS(HIPACM_BIND_FIELD)
#undef HIPACM_BIND_FIELD
    api.library_path = cached.library->path();
    const cu_result init = api.cuInit(0);
    if (init != kCudaSuccess) {
      cached.error = "cuInit failed: " + cuda_error_text(api, init);
      return cached;
    }
    cached.usable = true;
  } catch (const std::bad_alloc&) {
    cached.error = "out of memory while loading the CUDA driver";
  }
  return cached;
}

}  // namespace

const CudaDriverApi* load_cuda_driver(std::string* error) {
  static NoDestructor<CachedDriver> cached(load_once());
  const CachedDriver& state = cached.get();
  if (state.usable) return &state.api;
  if (error != nullptr) *error = state.error;
  return nullptr;
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
