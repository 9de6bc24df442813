// nvrtc_api.cpp - finds and binds NVRTC at run time, once per process.
#include "hip_backend/nvrtc/nvrtc_api.h"

#include <array>
#include <cstdlib>
#include <new>

#include "support/environment.h"
#include "support/no_destructor.h"

namespace hipacm::backend {

namespace {

constexpr std::array<const char*, 3> kSonames = {"libnvrtc.so.13", "libnvrtc.so.12",
                                                 "libnvrtc.so.11"};

bool bind_symbols(const DynamicLibrary& library, NvrtcApi* api, std::string* missing) {
#define HIPACM_BIND_FIELD(name, ret, params)                               \
  if (std::string dl_error; !library.bind(#name, &api->name, &dl_error)) { \
    *missing = std::string(#name) + " (" + dl_error + ")";                 \
    return false;                                                          \
  }
  HIPACM_NVRTC_SYMBOLS(HIPACM_BIND_FIELD)
#undef HIPACM_BIND_FIELD
  api->library_path = library.path();
  return true;
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

struct CachedNvrtc {
  std::optional<LoadedNvrtc> loaded;
  std::string error;
};

CachedNvrtc load_once() {
  CachedNvrtc cached;
  try {
    cached.loaded = load_nvrtc_from(nvrtc_library_candidates(), &cached.error);
  } catch (const std::bad_alloc&) {
    cached.error = "out of memory while loading NVRTC";
  } catch (const std::exception& e) {
    cached.error = std::string("cannot load NVRTC: ") + e.what();
  }
  return cached;
}

}  // namespace

std::vector<std::string> nvrtc_library_candidates() {
  if (auto override_path = environment_value("HIPACM_NVRTC_LIBRARY")) return {*override_path};
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

std::optional<LoadedNvrtc> load_nvrtc_from(const std::vector<std::string>& candidates,
                                           std::string* error) {
  std::string tried;
  for (const std::string& name : candidates) {
    std::string open_error;
    // Pinned: NVRTC keeps its builtins library and threads alive past a close.
    auto library = DynamicLibrary::open(name, &open_error, DynamicLibrary::Lifetime::kPinned);
    if (!library) {
      tried += (tried.empty() ? "" : "; ") + open_error;
      continue;
    }
    std::optional<LoadedNvrtc> loaded(LoadedNvrtc{std::move(*library), NvrtcApi{}});
    std::string missing;
    if (!bind_symbols(loaded->library, &loaded->api, &missing)) {
      if (error != nullptr) {
        *error = "NVRTC library " + loaded->library.path() + " is missing symbol " + missing;
      }
      return std::nullopt;
    }
    fill_identity(&loaded->api);
    return loaded;
  }
  if (error != nullptr) {
    *error = "cannot open NVRTC (tried " + std::to_string(candidates.size()) +
             " libraries: " + tried + "); set HIPACM_NVRTC_LIBRARY to its path";
  }
  return std::nullopt;
}

const NvrtcApi* load_nvrtc(std::string* error) {
  static NoDestructor<CachedNvrtc> cached(load_once());
  const CachedNvrtc& state = cached.get();
  if (state.loaded) return &state.loaded->api;
  if (error != nullptr) *error = state.error;
  return nullptr;
}

std::string nvrtc_version_string() {
  const NvrtcApi* api = load_nvrtc(nullptr);
  if (api == nullptr) return "nvrtc unavailable";
  return "nvrtc " + api->version + " (" + api->library_path + ")";
}

std::string nvrtc_result_name(nvrtc_result result) {
  static constexpr std::array<const char*, 18> kNames = {
      "NVRTC_SUCCESS",
      "NVRTC_ERROR_OUT_OF_MEMORY",
      "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
      "NVRTC_ERROR_INVALID_INPUT",
      "NVRTC_ERROR_INVALID_PROGRAM",
      "NVRTC_ERROR_INVALID_OPTION",
      "NVRTC_ERROR_COMPILATION",
      "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
      "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
      "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
      "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
      "NVRTC_ERROR_INTERNAL_ERROR",
      "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
      "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
      "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
      "NVRTC_ERROR_PCH_CREATE",
      "NVRTC_ERROR_CANCELLED",
      "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED"};
  if (result >= 0 && static_cast<std::size_t>(result) < kNames.size()) return kNames[result];
  return "nvrtcResult " + std::to_string(result);
}

}  // namespace hipacm::backend
