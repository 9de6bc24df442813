// module_loader.cpp - load_module: picks the CUDA or HIP loader by arch and keeps exceptions
// inside.
#include "hip_backend/device/module_loader.h"

#include <new>

#include "hip_backend/target_arch.h"

namespace hipacm::backend {

ModuleLoad load_module(const std::vector<std::uint8_t>& code, const std::string& arch, int device,
                       const std::vector<std::string>& function_names) noexcept {
  try {
    if (is_nvidia_arch(arch)) return load_cuda_module(code, device, function_names);
    return load_hip_module(code, device, function_names);
  } catch (const std::bad_alloc&) {
    ModuleLoad load;
    load.status = HIPACM_ERROR_OUT_OF_MEMORY;
    return load;
  } catch (...) {
    ModuleLoad load;
    load.status = HIPACM_ERROR_INTERNAL;
    return load;
  }
}

}  // namespace hipacm::backend
