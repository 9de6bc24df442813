// SPDX-License-Identifier: MIT
// hip_module.cpp - a code object loaded through the HIP runtime (hipModuleLoadData), unloaded with
// it.
#include "hip_backend/device/hip_runtime.h"
#include "hip_backend/device/module_loader.h"
#include "hip_backend/hiprtc/backend_lock.h"

namespace hipacm::backend {

namespace {

class HipModule final : public LoadedModule {
 public:
  explicit HipModule(const HipRuntimeApi& api) : api_(api) {}
  ~HipModule() override {
    if (module_ == nullptr) return;
    RocmBackendLock lock;
    api_.hipModuleUnload(module_);
  }

  // Under the ROCm lock. Restores the thread's current device afterwards.
  hip_error load(const std::vector<std::uint8_t>& code, int device,
                 const std::vector<std::string>& names) {
    int previous = 0;
    step_ = "hipGetDevice";
    hip_error error = api_.hipGetDevice(&previous);
    if (error != kHipSuccess) return error;
    step_ = "hipSetDevice(" + std::to_string(device) + ")";
    error = api_.hipSetDevice(device);
    if (error != kHipSuccess) return error;
    error = load_on_current(code, names);
    api_.hipSetDevice(previous);
    return error;
  }

 private:
  hip_error load_on_current(const std::vector<std::uint8_t>& code,
                            const std::vector<std::string>& names) {
    step_ = "hipModuleLoadData";
    void* module = nullptr;
    hip_error error = api_.hipModuleLoadData(&module, code.data());
    if (error != kHipSuccess) return error;
    module_ = module;
    return resolve_functions(names, "hipModuleGetFunction", [&](void** function, const char* name) {
      return api_.hipModuleGetFunction(function, module, name);
    });
  }

  const HipRuntimeApi& api_;
};

}  // namespace

ModuleLoad load_hip_module(const std::vector<std::uint8_t>& code, int device,
                           const std::vector<std::string>& function_names) {
  const Expected<const HipRuntimeApi*> loaded = load_hip_runtime();
  if (!loaded) return runtime_unavailable("HIP", device, loaded.failure().message);
  const HipRuntimeApi* api = loaded.value();
  auto module = std::make_shared<HipModule>(*api);
  RocmBackendLock lock;
  int count = 0;
  const hip_error counted = api->hipGetDeviceCount(&count);
  if (counted != kHipSuccess || device >= count) {
    return no_such_device("HIP runtime", device, count,
                          counted != kHipSuccess ? hip_error_text(*api, counted) : "");
  }
  const hip_error error = module->load(code, device, function_names);
  if (error != kHipSuccess) {
    return step_failed(
        error == kHipErrorOutOfMemory ? HIPACM_ERROR_OUT_OF_MEMORY : HIPACM_ERROR_INTERNAL,
        module->failed_step(), "HIP", device, hip_error_text(*api, error));
  }
  return loaded_module(std::move(module));
}

}  // namespace hipacm::backend
