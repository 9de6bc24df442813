// hiprtc_api.cpp - finds and binds hipRTC at run time, once per process.
#include "hip_backend/hiprtc/hiprtc_api.h"

#include <boost/thread/lock_guard.hpp>

#include <array>
#include <cstdlib>
#include <new>

#include "support/environment.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "support/no_destructor.h"

namespace hipacm::backend {

namespace {

// ROCm 6+ ships hipRTC as its own library; ROCm 5.x keeps it inside libamdhip64.
constexpr std::array<const char*, 8> kDefaultCandidates = {
    "libhiprtc.so",   "libhiprtc.so.7",   "libhiprtc.so.6",   "libhiprtc.so.5",
    "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};

// Fills every entry point or names the first one that is missing.
bool bind_symbols(const DynamicLibrary& library, HiprtcApi* api, std::string* missing) {
#define HIPACM_BIND_FIELD(name, ret, params)                               \
  if (std::string dl_error; !library.bind(#name, &api->name, &dl_error)) { \
    *missing = std::string(#name) + " (" + dl_error + ")";                 \
    return false;                                                          \
  }
  HIPACM_HIPRTC_SYMBOLS(HIPACM_BIND_FIELD)
#undef HIPACM_BIND_FIELD
  api->library_path = library.path();
  return true;
}

// hiprtcVersion is the first call into the library, which is where hipRTC's
// lazy initialization races, so it runs under the global lock.
void fill_version(HiprtcApi* api) {
  int major = 0;
  int minor = 0;
  hiprtc_result result = kHiprtcErrorOutOfMemory;
  {
    boost::lock_guard<boost::mutex> lock(hiprtc_mutex());
    result = api->hiprtcVersion(&major, &minor);
  }
  api->version =
      result == kHiprtcSuccess ? std::to_string(major) + "." + std::to_string(minor) : "";
}

std::optional<LoadedHiprtc> finish(DynamicLibrary library, const HiprtcApi& api) {
  std::optional<LoadedHiprtc> loaded(LoadedHiprtc{std::move(library), api});
  fill_version(&loaded->api);
  return loaded;
}

struct CachedHiprtc {
  std::optional<LoadedHiprtc> loaded;
  std::string error;
};

CachedHiprtc load_once() {
  CachedHiprtc cached;
  try {
    cached.loaded = load_hiprtc_from(hiprtc_library_candidates(), &cached.error);
  } catch (const std::bad_alloc&) {
    cached.error = "out of memory while loading hipRTC";
  } catch (const std::exception& e) {
    cached.error = std::string("cannot load hipRTC: ") + e.what();
  }
  return cached;
}

}  // namespace

boost::mutex& hiprtc_mutex() {
  static NoDestructor<boost::mutex> mutex;
  return mutex.get();
}

std::vector<std::string> hiprtc_library_candidates() {
  if (auto override_path = environment_value("HIPACM_HIPRTC_LIBRARY")) return {*override_path};
  return {kDefaultCandidates.begin(), kDefaultCandidates.end()};
}

std::optional<LoadedHiprtc> load_hiprtc_from(const std::vector<std::string>& candidates,
                                             std::string* error) {
  std::string ignored;
  for (const std::string& name : candidates) {
    auto library = DynamicLibrary::open_if_loaded(name, nullptr, DynamicLibrary::Lifetime::kPinned);
    HiprtcApi api;
    if (library && bind_symbols(*library, &api, &ignored)) return finish(std::move(*library), api);
  }

  std::string tried;
  for (const std::string& name : candidates) {
    std::string open_error;
    auto library = DynamicLibrary::open(name, &open_error, DynamicLibrary::Lifetime::kPinned);
    if (!library) {
      tried += (tried.empty() ? "" : "; ") + open_error;
      continue;
    }
    HiprtcApi api;
    std::string missing;
    if (!bind_symbols(*library, &api, &missing)) {
      *error = "hipRTC library " + library->path() + " is missing symbol " + missing;
      return std::nullopt;
    }
    return finish(std::move(*library), api);
  }
  *error = "cannot open hipRTC (tried " + std::to_string(candidates.size()) +
           " libraries: " + tried + "); set HIPACM_HIPRTC_LIBRARY to its path";
  return std::nullopt;
}

const HiprtcApi* load_hiprtc(std::string* error) {
  static NoDestructor<CachedHiprtc> cached(load_once());
  const CachedHiprtc& state = cached.get();
  if (state.loaded) return &state.loaded->api;
  if (error != nullptr) *error = state.error;
  return nullptr;
}

std::string hiprtc_result_name(hiprtc_result result) {
  static constexpr std::array<const char*, 12> kNames = {
      "HIPRTC_SUCCESS",
      "HIPRTC_ERROR_OUT_OF_MEMORY",
      "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
      "HIPRTC_ERROR_INVALID_INPUT",
      "HIPRTC_ERROR_INVALID_PROGRAM",
      "HIPRTC_ERROR_INVALID_OPTION",
      "HIPRTC_ERROR_COMPILATION",
      "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
      "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
      "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
      "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
      "HIPRTC_ERROR_INTERNAL_ERROR"};
  if (result >= 0 && static_cast<std::size_t>(result) < kNames.size()) return kNames[result];
  return "hiprtcResult " + std::to_string(result);
}

}  // namespace hipacm::backend
