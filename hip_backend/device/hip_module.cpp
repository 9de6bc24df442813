// hip_module.cpp - a code object loaded through the HIP runtime (hipModuleLoadData), unloaded with
// it.
#include <boost/thread/lock_guard.hpp>

#include <optional>

#include "support/dynamic_library.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/device/module_loader.h"
#include "support/no_destructor.h"

namespace hipacm::backend {

namespace {

using hip_error = int;  // hipError_t; 0 = hipSuccess
constexpr hip_error kHipSuccess = 0;
constexpr hip_error kHipErrorOutOfMemory = 2;

#define HIPACM_HIP_MODULE_SYMBOLS(X)                               \
  X(hipGetDeviceCount, hip_error, (int*))                          \
  X(hipGetDevice, hip_error, (int*))                               \
  X(hipSetDevice, hip_error, (int))                                \
  X(hipModuleLoadData, hip_error, (void**, const void*))           \
  X(hipModuleUnload, hip_error, (void*))                           \
  X(hipModuleGetFunction, hip_error, (void**, void*, const char*)) \
  X(hipGetErrorName, const char*, (hip_error))

struct HipModuleApi {
#define HIPACM_DECLARE_FIELD(name, ret, params) ret(*name) params = nullptr;
  HIPACM_HIP_MODULE_SYMBOLS(HIPACM_DECLARE_FIELD)
#undef HIPACM_DECLARE_FIELD
};

struct CachedHip {
  std::optional<DynamicLibrary> library;
  HipModuleApi api;
  std::string error;
};

CachedHip load_once() {
  CachedHip cached;
  std::string tried;
  for (const char* name : {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so"}) {
    std::string open_error;
    cached.library = DynamicLibrary::open(name, &open_error, DynamicLibrary::Lifetime::kPinned);
    if (cached.library) break;
    tried += (tried.empty() ? "" : "; ") + open_error;
  }
  if (!cached.library) {
    cached.error = "cannot open the HIP runtime (" + tried + ")";
    return cached;
  }
#define HIPACM_BIND_FIELD(name, ret, params)                                       \
  if (!cached.library->bind(#name, &cached.api.name, nullptr)) {                   \
    cached.error = "HIP runtime " + cached.library->path() + " is missing " #name; \
    return cached;                                                                 \
  }
  HIPACM_HIP_MODULE_SYMBOLS(HIPACM_BIND_FIELD)
#undef HIPACM_BIND_FIELD
  return cached;
}

const CachedHip& hip_runtime() {
  static NoDestructor<CachedHip> cached(load_once());
  return cached.get();
}

std::string error_text(const HipModuleApi& api, hip_error error) {
  const char* name = api.hipGetErrorName(error);
  return (name != nullptr ? std::string(name) : "hipError_t") + " (" + std::to_string(error) + ")";
}

class HipModule final : public LoadedModule {
 public:
  explicit HipModule(const HipModuleApi& api) : api_(api) {}
  ~HipModule() override {
    if (module_ == nullptr) return;
    // The runtime shares its lazy initialization with hipRTC: same lock.
    boost::lock_guard<boost::mutex> lock(hiprtc_mutex());
    api_.hipModuleUnload(module_);
  }

  // Under hiprtc_mutex(). Restores the thread's current device afterwards.
  hip_error load(const std::vector<std::uint8_t>& code, int device,
                 const std::vector<std::string>& names, std::string* step) {
    int previous = 0;
    *step = "hipGetDevice";
    hip_error error = api_.hipGetDevice(&previous);
    if (error != kHipSuccess) return error;
    *step = "hipSetDevice(" + std::to_string(device) + ")";
    error = api_.hipSetDevice(device);
    if (error != kHipSuccess) return error;
    error = load_on_current(code, names, step);
    api_.hipSetDevice(previous);
    return error;
  }

 private:
  hip_error load_on_current(const std::vector<std::uint8_t>& code,
                            const std::vector<std::string>& names, std::string* step) {
    *step = "hipModuleLoadData";
    void* module = nullptr;
    hip_error error = api_.hipModuleLoadData(&module, code.data());
    if (error != kHipSuccess) return error;
    module_ = module;
    functions_.reserve(names.size());
    for (const std::string& name : names) {
      *step = "hipModuleGetFunction(\"" + name + "\")";
      void* function = nullptr;
      error = api_.hipModuleGetFunction(&function, module, name.c_str());
      if (error != kHipSuccess) return error;
      functions_.push_back(function);
    }
    return kHipSuccess;
  }

  const HipModuleApi& api_;
};

}  // namespace

ModuleLoad load_hip_module(const std::vector<std::uint8_t>& code, int device,
                           const std::vector<std::string>& function_names) {
  ModuleLoad load;
  const CachedHip& runtime = hip_runtime();
  if (!runtime.error.empty()) {
    load.status = HIPACM_ERROR_BACKEND_UNAVAILABLE;
    load.error =
        "cannot load the module on HIP device " + std::to_string(device) + ": " + runtime.error;
    return load;
  }
  auto module = std::make_shared<HipModule>(runtime.api);
  boost::lock_guard<boost::mutex> lock(hiprtc_mutex());
  int count = 0;
  const hip_error counted = runtime.api.hipGetDeviceCount(&count);
  if (counted != kHipSuccess || device >= count) {
    load.status = HIPACM_ERROR_BACKEND_UNAVAILABLE;
    load.error =
        "load_device is " + std::to_string(device) + " but the HIP runtime reports " +
        std::to_string(count) + " device(s)" +
        (counted != kHipSuccess ? " (" + error_text(runtime.api, counted) + ")" : std::string());
    return load;
  }
  std::string step;
  const hip_error error = module->load(code, device, function_names, &step);
  if (error != kHipSuccess) {
    load.status =
        error == kHipErrorOutOfMemory ? HIPACM_ERROR_OUT_OF_MEMORY : HIPACM_ERROR_INTERNAL;
    load.error = step + " on HIP device " + std::to_string(device) +
                 " failed: " + error_text(runtime.api, error);
    return load;
  }
  load.status = HIPACM_SUCCESS;
  load.module = std::move(module);
  return load;
}

}  // namespace hipacm::backend
