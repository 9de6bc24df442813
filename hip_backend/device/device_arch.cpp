// device_arch.cpp - the current GPU's arch through a dlopen'd HIP runtime, and the default arch.
#include "hip_backend/device/device_arch.h"

#include <boost/thread/lock_guard.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>

#include "hip_backend/device/device_arch_internal.h"
#include "support/dynamic_library.h"
#include "support/environment.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "support/no_destructor.h"

#if __has_include(<hip/hip_runtime_api.h>)
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
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

using GetDeviceCountFn = int (*)(int*);
using GetDeviceFn = int (*)(int*);
using GetDevicePropertiesFn = int (*)(void*, int);
using GetErrorNameFn = const char* (*)(int);

// ROCm 6 renamed the entry point when hipDeviceProp_t changed layout; the
// plain name there keeps the old layout. Match the header this was built with.
#if HIP_VERSION_MAJOR >= 6
constexpr const char* kGetDevicePropertiesSymbol = "hipGetDevicePropertiesR0600";
#else
constexpr const char* kGetDevicePropertiesSymbol = "hipGetDeviceProperties";
#endif

#define HIPACM_STRINGIFY2(x) #x
#define HIPACM_STRINGIFY(x) HIPACM_STRINGIFY2(x)

struct HipRuntime {
  std::optional<DynamicLibrary> library;
  GetDeviceCountFn get_device_count = nullptr;
  GetDeviceFn get_device = nullptr;
  GetDevicePropertiesFn get_device_properties = nullptr;
  GetErrorNameFn get_error_name = nullptr;  // optional
  std::string error;
};

HipRuntime load_runtime() {
  HipRuntime runtime;
  std::string tried;
  // Pinned: once initialized, the runtime has threads running its code.
  for (const char* name :
       {"libamdhip64.so." HIPACM_STRINGIFY(HIP_VERSION_MAJOR), "libamdhip64.so"}) {
    std::string open_error;
    runtime.library = DynamicLibrary::open(name, &open_error, DynamicLibrary::Lifetime::kPinned);
    if (runtime.library) break;
    tried += (tried.empty() ? "" : "; ") + open_error;
  }
  if (!runtime.library) {
    runtime.error = "cannot open the HIP runtime (" + tried + ")";
    return runtime;
  }
  std::string missing;
  auto bind = [&](const char* symbol) {
    void* address = runtime.library->symbol(symbol, &missing);
    if (address == nullptr && runtime.error.empty()) {
      runtime.error = "HIP runtime " + runtime.library->path() + " is missing " + symbol;
    }
    return address;
  };
  runtime.get_device_count = reinterpret_cast<GetDeviceCountFn>(bind("hipGetDeviceCount"));
  runtime.get_device = reinterpret_cast<GetDeviceFn>(bind("hipGetDevice"));
  runtime.get_device_properties =
      reinterpret_cast<GetDevicePropertiesFn>(bind(kGetDevicePropertiesSymbol));
  runtime.get_error_name =
      reinterpret_cast<GetErrorNameFn>(runtime.library->symbol("hipGetErrorName", nullptr));
  return runtime;
}

const HipRuntime& hip_runtime() {
  static NoDestructor<HipRuntime> runtime(load_runtime());
  return runtime.get();
}

std::string error_text(const HipRuntime& runtime, int code) {
  const char* name = runtime.get_error_name != nullptr ? runtime.get_error_name(code) : nullptr;
  return (name != nullptr ? std::string(name) + " " : std::string()) + "(" + std::to_string(code) +
         ")";
}

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
    const HipRuntime& runtime = hip_runtime();
    if (!runtime.error.empty()) {
      set_why(why, runtime.error);
      return "";
    }
    // The runtime shares its library (and its lazy initialization) with
    // hipRTC, so it goes under the same lock; this can wait for a compile.
    boost::lock_guard<boost::mutex> lock(hiprtc_mutex());
    int count = 0;
    const int count_status = runtime.get_device_count(&count);
    if (count_status != 0 || count <= 0) {
      set_why(why, "no HIP device (hipGetDeviceCount: " + error_text(runtime, count_status) + ", " +
                       std::to_string(count) + " devices)");
      return "";
    }
    int device = 0;
    const int device_status = runtime.get_device(&device);
    if (device_status != 0) {
      set_why(why, "hipGetDevice failed: " + error_text(runtime, device_status));
      return "";
    }
    auto buffer = std::make_unique<PropertiesBuffer>();
    const int properties_status = runtime.get_device_properties(&buffer->properties, device);
    if (properties_status != 0) {
      set_why(why, "hipGetDeviceProperties(" + std::to_string(device) +
                       ") failed: " + error_text(runtime, properties_status));
      return "";
    }
    const char* name = buffer->properties.gcnArchName;
    const std::string arch(name, strnlen(name, sizeof buffer->properties.gcnArchName));
    if (arch.empty()) set_why(why, "device " + std::to_string(device) + " has no gcnArchName");
    return arch;
  } catch (const std::exception& e) {
    set_why(why, std::string("cannot query the HIP device: ") + e.what());
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
  if (auto from_env = environment_value("HIPACM_ARCH")) return *from_env;
  std::string no_device;
  std::string arch;
  try {
    arch = current_device_arch(&no_device);
  } catch (const std::exception& e) {
    no_device = e.what();
  }
  if (!arch.empty()) return arch;
  set_why(why,
          "no target arch: set hipacm_mode_config.arch or HIPACM_ARCH (e.g. gfx90a); no GPU was "
          "found (" +
              no_device + ")");
  return "";
}

}  // namespace hipacm::backend
