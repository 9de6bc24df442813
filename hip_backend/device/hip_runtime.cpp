// SPDX-License-Identifier: MIT
// hip_runtime.cpp - finds and binds the HIP runtime at run time, once per process.
#include "hip_backend/device/hip_runtime.h"

#include "hip_backend/rocm_paths.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"
#include "support/no_destructor.h"
#include "support/settings.h"

#if __has_include(<hip/hip_version.h>)
#include <hip/hip_version.h>
#endif

namespace hipacm::backend {

namespace {

// libamdhip64.so.<major> in the folder of the hipRTC this process compiles with, when hipRTC is
// already loaded (loading it here only to pick a runtime would cost more than it saves). ROCm 5's
// hipRTC is libamdhip64 itself, which the search then reuses as already loaded.
std::string hip_runtime_beside_hiprtc() {
  for (const LoadedObject& object : loaded_objects()) {
    const std::string real = real_file_path(object.path);
    const std::string name = file_base_name(real);
    if (name.rfind("libhiprtc.so.", 0) != 0) continue;
    const std::string major = name.substr(13, name.find('.', 13) - 13);
    if (major.empty() || major.find_first_not_of("0123456789") != std::string::npos) continue;
    return real.substr(0, real.size() - name.size()) + "libamdhip64.so." + major;
  }
  return {};
}

// The runtime of hipRTC's own ROCm comes first: a newer hipRTC's code objects beside an older
// runtime that a host also still carries may not load. Then the newest release.
LibrarySearch hip_runtime_search() {
  std::vector<std::string> defaults;
  if (const std::string beside = hip_runtime_beside_hiprtc(); !beside.empty())
    defaults.push_back(beside);
  for (std::string& candidate : rocm_library_candidates(
           {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}))
    defaults.push_back(std::move(candidate));
  return {.name = "HIP runtime",
          .override_variable = settings::name(settings::Id::kHipRuntimeLibrary),
          .defaults = std::move(defaults),
          .not_found = "cannot open the HIP runtime",
          .prefer_loaded = true};
}

void bind_hip_runtime(SymbolBinder& binder, HipRuntimeApi* api) {
  HIPACM_HIP_RUNTIME_SYMBOLS(HIPACM_LIBRARY_REQUIRE)
  if (*hip_device_properties_symbol() != '\0')
    binder.optional(hip_device_properties_symbol(), &api->get_device_properties);
}

constexpr LibrarySpec<HipRuntimeApi> kHipRuntime = {&hip_runtime_search, &bind_hip_runtime};

}  // namespace

std::vector<std::string> hip_runtime_candidates() { return kHipRuntime.candidates(); }

Expected<const HipRuntimeApi*> load_hip_runtime() {
  static NoDestructor<LazyLibrary<HipRuntimeApi>> library("cannot load the HIP runtime",
                                                          kHipRuntime);
  return library->api();
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
