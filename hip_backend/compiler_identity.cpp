// compiler_identity.cpp - the compiler's backend name and exact version string for an arch.
#include "hip_backend/compiler_identity.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <memory>

#include "hip_backend/hiprtc_api.h"
#include "hip_backend/no_destructor.h"
#include "hip_backend/nvrtc_api.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {
namespace {

// The real file behind the opened name (libamdhip64.so.5 -> ...so.5.2.50203);
// the opened name when it cannot be resolved. dladdr gives the loaded
// object's path even when it was opened by a bare soname.
std::string resolved_file_name(const HiprtcApi& api) {
  std::string resolved = api.library_path;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(api.hiprtcVersion), &info) != 0 && info.dli_fname != nullptr)
    resolved = info.dli_fname;
  struct FreeDeleter {
    void operator()(char* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<char, FreeDeleter> real(::realpath(resolved.c_str(), nullptr));
  if (real) resolved = real.get();
  const auto slash = resolved.rfind('/');
  return slash == std::string::npos ? resolved : resolved.substr(slash + 1);
}

CompilerIdentity hiprtc_identity() {
  std::string error;
  const HiprtcApi* api = load_hiprtc(&error);
  if (api == nullptr) return {"hiprtc", ""};
  return {"hiprtc", api->version + " " + resolved_file_name(*api)};
}

CompilerIdentity nvrtc_identity() {
  // "nvrtc 13.0 (/path/libnvrtc.so.13)": an unloadable NVRTC gives no version,
  // and with no version nothing is cached.
  const std::string version = nvrtc_version_string();
  if (version.rfind("nvrtc unavailable", 0) == 0) return {"nvrtc", ""};
  return {"nvrtc", version};
}

}  // namespace

CompilerIdentity compiler_identity(const std::string& arch) {
  if (is_nvidia_arch(arch)) {
    try {
      static NoDestructor<CompilerIdentity> identity(nvrtc_identity());
      return *identity;
    } catch (...) {
      return {"nvrtc", ""};
    }
  }
  if (arch.rfind("gfx", 0) != 0) return {"unknown", ""};
  try {
    // The library cannot change under a running process: resolve it once.
    static NoDestructor<CompilerIdentity> identity(hiprtc_identity());
    return *identity;
  } catch (...) {
    return {"hiprtc", ""};
  }
}

}  // namespace hipacm::backend
