// SPDX-License-Identifier: MIT
// nvrtc_api.cpp - finds and binds NVRTC at run time, once per process.
#include "hip_backend/nvrtc/nvrtc_api.h"

#include <array>

#include "support/environment.h"
#include "support/no_destructor.h"
#include "support/settings.h"

namespace hipacm::backend {

namespace {

constexpr std::array<const char*, 3> kSonames = {"libnvrtc.so.13", "libnvrtc.so.12",
                                                 "libnvrtc.so.11"};

// The sonames on the default search path, then in each CUDA installation's lib64.
std::vector<std::string> nvrtc_default_candidates() {
  std::vector<std::string> candidates(kSonames.begin(), kSonames.end());
  std::vector<std::string> directories;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto root = environment_value(variable)) directories.push_back(*root + "/lib64");
  }
  directories.emplace_back("/usr/local/cuda/lib64");
  for (const std::string& directory : directories) {
    for (const char* soname : kSonames) candidates.push_back(directory + "/" + soname);
  }
  return candidates;
}

// Pinned (the default): NVRTC keeps its builtins library and threads alive past a close.
LibrarySearch nvrtc_search() {
  return {.name = "NVRTC",
          .override_variable = settings::name(settings::Id::kNvrtcLibrary),
          .defaults = nvrtc_default_candidates()};
}

void bind_nvrtc(SymbolBinder& binder, NvrtcApi* api) {
  HIPACM_NVRTC_SYMBOLS(HIPACM_LIBRARY_REQUIRE)
}

void fill_identity(NvrtcApi* api) {
  int major = 0;
  int minor = 0;
  if (api->nvrtcVersion(&major, &minor) == kNvrtcSuccess) {
    api->version = std::to_string(major) + "." + std::to_string(minor);
  }
  int count = 0;
  if (api->nvrtcGetNumSupportedArchs(&count) == kNvrtcSuccess && count > 0 && count < 4096) {
    api->supported_archs.resize(static_cast<std::size_t>(count));
    if (api->nvrtcGetSupportedArchs(api->supported_archs.data()) != kNvrtcSuccess) {
      api->supported_archs.clear();
    }
  }
}

constexpr LibrarySpec<NvrtcApi> kNvrtc = {&nvrtc_search, &bind_nvrtc, &fill_identity};

}  // namespace

std::vector<std::string> nvrtc_library_candidates() { return kNvrtc.candidates(); }

Expected<LoadedNvrtc> load_nvrtc_from(const std::vector<std::string>& candidates) {
  return kNvrtc.find(candidates);
}

Expected<const NvrtcApi*> load_nvrtc() {
  static NoDestructor<LazyLibrary<NvrtcApi>> library("cannot load NVRTC", kNvrtc);
  Expected<const NvrtcApi*> api = library->api();
  if (api) return api;
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE, std::move(api).failure().message};
}

std::string nvrtc_version_string() {
  const Expected<const NvrtcApi*> loaded = load_nvrtc();
  if (!loaded) return "nvrtc unavailable";
  const NvrtcApi* api = loaded.value();
  return "nvrtc " + api->version + " (" + api->library_path + ")";
}

std::string nvrtc_result_name(nvrtc_result result) {
  return rtc_result_name("NVRTC", "nvrtcResult", result, 18);
}

}  // namespace hipacm::backend
