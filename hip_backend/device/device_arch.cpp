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

void set_why(std::string* why, std::string message) {
  if (why != nullptr) *why = std::move(message);
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

std::string query_hip_runtime_arch(std::string* why) {
#if HIPACM_HAVE_HIP_HEADERS
  try {
    std::string runtime_error;
    const HipRuntimeApi* runtime = load_hip_runtime(&runtime_error);
    if (runtime == nullptr) {
      set_why(why, runtime_error);
      return "";
    }
    if (runtime->get_device_properties == nullptr) {
      set_why(why, "HIP runtime library " + runtime->library_path + " is missing symbol " +
                       hip_device_properties_symbol());
      return "";
    }
    // This can wait for a compile: the runtime shares ROCm's process-wide state.
    RocmBackendLock lock;
    int count = 0;
    const hip_error count_status = runtime->hipGetDeviceCount(&count);
    if (count_status != kHipSuccess || count <= 0) {
      set_why(why, "no HIP device (hipGetDeviceCount: " + hip_error_text(*runtime, count_status) +
                       ", " + std::to_string(count) + " devices)");
      return "";
    }
    int device = 0;
    const hip_error device_status = runtime->hipGetDevice(&device);
    if (device_status != kHipSuccess) {
      set_why(why, "hipGetDevice failed: " + hip_error_text(*runtime, device_status));
      return "";
    }
    auto buffer = std::make_unique<PropertiesBuffer>();
    const hip_error properties_status = runtime->get_device_properties(&buffer->properties, device);
    if (properties_status != kHipSuccess) {
      set_why(why, "hipGetDeviceProperties(" + std::to_string(device) +
                       ") failed: " + hip_error_text(*runtime, properties_status));
      return "";
    }
    const char* name = buffer->properties.gcnArchName;
    const std::string arch(name, strnlen(name, sizeof buffer->properties.gcnArchName));
    if (arch.empty()) set_why(why, "device " + std::to_string(device) + " has no gcnArchName");
    return arch;
  } catch (...) {
    set_why(why, failure_from_current_exception("cannot query the HIP device").message);
    return "";
  }
#else
  set_why(why, "hipacm was built without HIP headers, so it cannot ask the HIP runtime");
  return "";
#endif
}

std::string current_device_arch(std::string* why) {
  // Without the KFD node there is no AMD GPU to find; skip initializing the
  // HIP runtime (threads, device enumeration) for nothing.
  if (access(kKfdPath, F_OK) != 0) {
    set_why(why, std::string("no AMD GPU (") + kKfdPath + " missing)");
    return "";
  }
  if (access(kKfdPath, R_OK | W_OK) != 0) {
    const int access_errno = errno;
    set_why(why, std::string("no access to ") + kKfdPath + " (" + std::strerror(access_errno) +
                     "); the user may need the render or video group");
    return "";
  }
  return query_hip_runtime_arch(why);
}

std::string default_arch(std::string* why) {
  if (auto from_env = settings::arch()) return *from_env;
  std::string no_device;
  std::string arch;
  try {
    arch = current_device_arch(&no_device);
  } catch (...) {
    no_device = failure_from_current_exception().message;
  }
  if (!arch.empty()) return arch;
  set_why(why, std::string("no target arch: set hipacm_mode_config.arch or ") +
                   settings::name(settings::Id::kArch) + " (e.g. gfx90a); no GPU was found (" +
                   no_device + ")");
  return "";
}

}  // namespace hipacm::backend
