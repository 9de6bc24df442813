// SPDX-License-Identifier: MIT
// hiprtc_api.cpp - finds and binds hipRTC at run time, once per process.
#include "hip_backend/hiprtc/hiprtc_api.h"

#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/rocm_paths.h"
#include "support/no_destructor.h"
#include "support/settings.h"

namespace hipacm::backend {

namespace {

// ROCm 6+ ships hipRTC as its own library; ROCm 5.x keeps it inside libamdhip64 (whose 6 and 7
// releases no longer carry it, so they are not candidates). Newest release first; the unversioned
// names are -dev symlinks that runtime-only installs lack.
LibrarySearch hiprtc_search() {
  return {
      .name = "hipRTC",
      .override_variable = settings::name(settings::Id::kHiprtcLibrary),
      .defaults = rocm_library_candidates({"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5",
                                           "libhiprtc.so", "libamdhip64.so.5", "libamdhip64.so"}),
      .prefer_loaded = true};
}

void bind_hiprtc(SymbolBinder& binder, HiprtcApi* api) {
  HIPACM_HIPRTC_SYMBOLS(HIPACM_LIBRARY_REQUIRE)
}

// hiprtcVersion is the first call into the library, which is where hipRTC's
// lazy initialization races, so it runs under the ROCm lock.
void fill_version(HiprtcApi* api) {
  int major = 0;
  int minor = 0;
  hiprtc_result result = kHiprtcErrorOutOfMemory;
  {
    RocmBackendLock lock;
    result = api->hiprtcVersion(&major, &minor);
  }
  api->version =
      result == kHiprtcSuccess ? std::to_string(major) + "." + std::to_string(minor) : "";
}

constexpr LibrarySpec<HiprtcApi> kHiprtc = {&hiprtc_search, &bind_hiprtc, &fill_version};

}  // namespace

std::vector<std::string> hiprtc_library_candidates() { return kHiprtc.candidates(); }

Expected<LoadedHiprtc> load_hiprtc_from(const std::vector<std::string>& candidates) {
  return kHiprtc.find(candidates);
}

Expected<const HiprtcApi*> load_hiprtc() {
  static NoDestructor<LazyLibrary<HiprtcApi>> library("cannot load hipRTC", kHiprtc);
  Expected<const HiprtcApi*> api = library->api();
  if (api) return api;
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(api).failure().message};
}

std::string hiprtc_result_name(hiprtc_result result) {
  return rtc_result_name("HIPRTC", "hiprtcResult", result, 12);
}

}  // namespace hipacm::backend
