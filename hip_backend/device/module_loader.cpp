// SPDX-License-Identifier: MIT
// module_loader.cpp - load_module: picks the CUDA or HIP loader by arch, keeps exceptions inside,
// and words the outcomes of both.
#include "hip_backend/device/module_loader.h"

#include <utility>

#include "hip_backend/target_arch.h"
#include "support/failure.h"

namespace hipacm::backend {

ModuleLoad load_module(const std::vector<std::uint8_t>& code, const std::string& arch, int device,
                       const std::vector<std::string>& function_names) noexcept {
  try {
    if (is_nvidia_arch(arch)) return load_cuda_module(code, device, function_names);
    return load_hip_module(code, device, function_names);
  } catch (...) {
    Failure failure = failure_from_current_exception("cannot load the module");
    return ModuleLoad{failure.status, std::move(failure.message), nullptr};
  }
}

ModuleLoad runtime_unavailable(const char* platform, int device, const std::string& why) {
  return ModuleLoad{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                    "cannot load the module on " + std::string(platform) + " device " +
                        std::to_string(device) + ": " + why,
                    nullptr};
}

ModuleLoad no_such_device(const char* runtime, int device, int count, const std::string& detail) {
  return ModuleLoad{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                    "load_device is " + std::to_string(device) + " but the " + runtime +
                        " reports " + std::to_string(count) + " device(s)" +
                        (detail.empty() ? std::string() : " (" + detail + ")"),
                    nullptr};
}

ModuleLoad step_failed(hipacm_status status, const std::string& step, const char* platform,
                       int device, const std::string& error) {
  return ModuleLoad{
      status, step + " on " + platform + " device " + std::to_string(device) + " failed: " + error,
      nullptr};
}

ModuleLoad loaded_module(std::shared_ptr<const LoadedModule> module) {
  return ModuleLoad{HIPACM_SUCCESS, std::string(), std::move(module)};
}

}  // namespace hipacm::backend
