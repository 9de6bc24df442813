// SPDX-License-Identifier: MIT
// device_arch.cpp - the current GPU's arch through a dlopen'd HIP runtime, and the default arch.
#include "hip_backend/device/device_arch.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "hip_backend/device/device_arch_internal.h"
#include "hip_backend/device/hip_runtime.h"
#include "hip_backend/hiprtc/backend_lock.h"
#include "support/failure.h"
#include "support/settings.h"

#if __has_include(<hip/hip_runtime_api.h>)
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#define HIPACM_HAVE_HIP_HEADERS 1
#else
#define HIPACM_HAVE_HIP_HEADERS 0
#endif

namespace hipacm::backend {

namespace {

constexpr const char* kKfdPath = "/dev/kfd";

Failure no_arch(std::string message) {
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(message)};
}

#if HIPACM_HAVE_HIP_HEADERS

// The runtime's struct may be larger than the header's (newer ROCm appends
// fields); the slack keeps a bigger write inside our buffer.
struct PropertiesBuffer {
  hipDeviceProp_t properties;
  unsigned char slack[8192];
};

#endif  // HIPACM_HAVE_HIP_HEADERS

}  // namespace

Expected<std::string> query_hip_runtime_arch() {
#if HIPACM_HAVE_HIP_HEADERS
  try {
    const Expected<const HipRuntimeApi*> loaded = load_hip_runtime();
    if (!loaded) return no_arch(loaded.failure().message);
    const HipRuntimeApi* runtime = loaded.value();
    if (runtime->get_device_properties == nullptr) {
      return no_arch("HIP runtime library " + runtime->library_path + " is missing symbol " +
                     hip_device_properties_symbol());
    }
    // This can wait for a compile: the runtime shares ROCm's process-wide state.
    RocmBackendLock lock;
    int count = 0;
    const hip_error count_status = runtime->hipGetDeviceCount(&count);
    if (count_status != kHipSuccess || count <= 0) {
      return no_arch("no HIP device (hipGetDeviceCount: " + hip_error_text(*runtime, count_status) +
                     ", " + std::to_string(count) + " devices)");
    }
    int device = 0;
    const hip_error device_status = runtime->hipGetDevice(&device);
    if (device_status != kHipSuccess) {
      return no_arch("hipGetDevice failed: " + hip_error_text(*runtime, device_status));
    }
    auto buffer = std::make_unique<PropertiesBuffer>();
    const hip_error properties_status = runtime->get_device_properties(&buffer->properties, device);
    if (properties_status != kHipSuccess) {
      return no_arch("hipGetDeviceProperties(" + std::to_string(device) +
                     ") failed: " + hip_error_text(*runtime, properties_status));
    }
    const char* name = buffer->properties.gcnArchName;
    const std::string arch(name, strnlen(name, sizeof buffer->properties.gcnArchName));
    if (arch.empty()) return no_arch("device " + std::to_string(device) + " has no gcnArchName");
    return arch;
  } catch (...) {
    return no_arch(failure_from_current_exception("cannot query the HIP device").message);
  }
#else
  return no_arch("hipacm was built without HIP headers, so it cannot ask the HIP runtime");
#endif
}

Expected<std::string> current_device_arch() {
  // Without the KFD node there is no AMD GPU to find; skip initializing the
  // HIP runtime (threads, device enumeration) for nothing.
  if (access(kKfdPath, F_OK) != 0) {
    return no_arch(std::string("no AMD GPU (") + kKfdPath + " missing)");
  }
  if (access(kKfdPath, R_OK | W_OK) != 0) {
    const int access_errno = errno;
    return no_arch(std::string("no access to ") + kKfdPath + " (" + std::strerror(access_errno) +
                   "); the user may need the render or video group");
  }
  return query_hip_runtime_arch();
}

Expected<std::string> default_arch() {
  if (auto from_env = settings::arch()) return *from_env;
  std::string no_device;
  try {
    Expected<std::string> arch = current_device_arch();
    if (arch) return arch;
    no_device = arch.failure().message;
  } catch (...) {
    no_device = failure_from_current_exception().message;
  }
  return no_arch(std::string("no target arch: set hipacm_mode_config.arch or ") +
                 settings::name(settings::Id::kArch) + " (e.g. gfx90a); no GPU was found (" +
                 no_device + ")");
}

}  // namespace hipacm::backend
