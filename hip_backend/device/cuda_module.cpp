// SPDX-License-Identifier: MIT
// cuda_module.cpp - a code object loaded into a device's primary CUDA context, unloaded with it
// pushed.
#include "hip_backend/device/cuda_driver_api.h"
#include "hip_backend/device/module_loader.h"

namespace hipacm::backend {

namespace {

hipacm_status status_for(cu_result result) {
  if (result == kCudaErrorOutOfMemory) return HIPACM_ERROR_OUT_OF_MEMORY;
  if (result == kCudaErrorNoDevice || result == kCudaErrorInvalidDevice) {
    return HIPACM_ERROR_BACKEND_UNAVAILABLE;
  }
  return HIPACM_ERROR_INTERNAL;
}

// Pushes a context for one scope: the pool thread's own current context
// (if the host set one) is back in place afterwards.
class PushedContext {
 public:
  PushedContext(const CudaDriverApi& api, cu_context context) : api_(api) {
    pushed_ = api_.cuCtxPushCurrent(context);
  }
  PushedContext(const PushedContext&) = delete;
  PushedContext& operator=(const PushedContext&) = delete;
  ~PushedContext() {
    cu_context popped = nullptr;
    if (pushed_ == kCudaSuccess) api_.cuCtxPopCurrent(&popped);
  }
  cu_result result() const { return pushed_; }

 private:
  const CudaDriverApi& api_;
  cu_result pushed_;
};

class CudaModule final : public LoadedModule {
 public:
  CudaModule(const CudaDriverApi& api, cu_device device) : api_(api), device_(device) {}
  ~CudaModule() override {
    if (module_ != nullptr) {
      PushedContext pushed(api_, context_);
      if (pushed.result() == kCudaSuccess) api_.cuModuleUnload(static_cast<cu_module>(module_));
    }
    if (context_ != nullptr) api_.cuDevicePrimaryCtxRelease(device_);
  }

  // Each step leaves what it acquired in a member, so the destructor undoes
  // exactly what succeeded when a later step fails.
  cu_result load(const std::vector<std::uint8_t>& code, const std::vector<std::string>& names) {
    step_ = "cuDevicePrimaryCtxRetain";
    cu_context context = nullptr;
    cu_result result = api_.cuDevicePrimaryCtxRetain(&context, device_);
    if (result != kCudaSuccess) return result;
    context_ = context;
    PushedContext pushed(api_, context_);
    step_ = "cuCtxPushCurrent";
    if (pushed.result() != kCudaSuccess) return pushed.result();
    step_ = "cuModuleLoadData";
    cu_module module = nullptr;
    result = api_.cuModuleLoadData(&module, code.data());
    if (result != kCudaSuccess) return result;
    module_ = module;
    return resolve_functions(names, "cuModuleGetFunction", [&](void** function, const char* name) {
      cu_function resolved = nullptr;
      const cu_result got = api_.cuModuleGetFunction(&resolved, module, name);
      *function = resolved;
      return got;
    });
  }

 private:
  const CudaDriverApi& api_;
  const cu_device device_;
  cu_context context_ = nullptr;
};

}  // namespace

ModuleLoad load_cuda_module(const std::vector<std::uint8_t>& code, int device,
                            const std::vector<std::string>& function_names) {
  const Expected<const CudaDriverApi*> loaded = load_cuda_driver();
  if (!loaded) return runtime_unavailable("CUDA", device, loaded.failure().message);
  const CudaDriverApi* api = loaded.value();
  int count = 0;
  cu_result result = api->cuDeviceGetCount(&count);
  if (result != kCudaSuccess || device >= count) {
    return no_such_device(
        "CUDA driver", device, count,
        result != kCudaSuccess ? "cuDeviceGetCount: " + cuda_error_text(*api, result) : "");
  }
  cu_device handle = 0;
  result = api->cuDeviceGet(&handle, device);
  if (result != kCudaSuccess) {
    return ModuleLoad{
        status_for(result),
        "cuDeviceGet(" + std::to_string(device) + ") failed: " + cuda_error_text(*api, result),
        nullptr};
  }
  auto module = std::make_shared<CudaModule>(*api, handle);
  result = module->load(code, function_names);
  if (result != kCudaSuccess) {
    return step_failed(status_for(result), module->failed_step(), "CUDA", device,
                       cuda_error_text(*api, result));
  }
  return loaded_module(std::move(module));
}

}  // namespace hipacm::backend
