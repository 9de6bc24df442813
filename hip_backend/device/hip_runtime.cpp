// hip_runtime.cpp - finds and binds the HIP runtime at run time, once per process.
#include "hip_backend/device/hip_runtime.h"

#include "support/no_destructor.h"

#if __has_include(<hip/hip_version.h>)
#include <hip/hip_version.h>
#endif

namespace hipacm::backend {

namespace {

LibrarySearch hip_runtime_search() {
  return {.name = "HIP runtime",
          .defaults = {"libamdhip64.so.5", "libamdhip64.so.6", "libamdhip64.so"},
          .not_found = "cannot open the HIP runtime"};
}

void bind_hip_runtime(SymbolBinder& binder, HipRuntimeApi* api) {
  HIPACM_HIP_RUNTIME_SYMBOLS(HIPACM_LIBRARY_REQUIRE)
  if (*hip_device_properties_symbol() != '\0')
    binder.optional(hip_device_properties_symbol(), &api->get_device_properties);
}

constexpr LibrarySpec<HipRuntimeApi> kHipRuntime = {&hip_runtime_search, &bind_hip_runtime};

}  // namespace

std::vector<std::string> hip_runtime_candidates() { return kHipRuntime.candidates(); }

const HipRuntimeApi* load_hip_runtime(std::string* error) {
  static NoDestructor<LazyLibrary<HipRuntimeApi>> library("cannot load the HIP runtime",
                                                          kHipRuntime);
  return library->api(error);
}

const char* hip_device_properties_symbol() {
#if !defined(HIP_VERSION_MAJOR)
  return "";
#elif HIP_VERSION_MAJOR >= 6
  return "hipGetDevicePropertiesR0600";
#else
  return "hipGetDeviceProperties";
#endif
}

std::string hip_error_text(const HipRuntimeApi& api, hip_error error) {
  const char* name = api.hipGetErrorName(error);
  return (name != nullptr ? std::string(name) : "hipError_t") + " (" + std::to_string(error) + ")";
}

}  // namespace hipacm::backend
