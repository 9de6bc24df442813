// SPDX-License-Identifier: MIT
// backend_info.cpp - hipacm_get_backend_info: what compiler was found, where, and the default arch.
#include <hipacm/hipacm.h>

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <set>
#include <string>

#include "hip_backend/device/device_arch.h"
#include "hip_backend/dispatch/compiler_inventory.h"
#include "plugin/abi/entry_guard.h"
#include "plugin/abi/struct_fields.h"
#include "plugin/abi/struct_versions.h"
#include "support/no_destructor.h"

using namespace hipacm;

namespace {

// The info strings must outlive every call, yet the default arch can change
// with the environment; interned strings are never freed, and a process
// sees only a handful of distinct values.
const char* intern(const std::string& value) {
  static backend::NoDestructor<boost::mutex> mutex;
  static backend::NoDestructor<std::set<std::string>> strings;
  boost::lock_guard<boost::mutex> lock(*mutex);
  return strings->insert(value).first->c_str();
}

}  // namespace

extern "C" HIPACM_API hipacm_status hipacm_get_backend_info(hipacm_backend_info* out) {
  const char* const function = __func__;  // __func__ in the lambda would be "operator()"
  return guarded(function, [&] {
    if (out == nullptr) throw StatusError(HIPACM_ERROR_INVALID_ARGUMENT, "out is NULL");
    require_struct_size(out, kBackendInfoV1Size, "hipacm_backend_info");
    out->available = 0;
    out->compiler = "hiprtc";
    out->version = "";
    out->library_path = "";
    out->default_arch = "";

    const Expected<std::string> default_arch = backend::default_arch();
    out->default_arch = intern(default_arch ? default_arch.value() : std::string());

    // One compiler fits in the struct: the one that serves the default arch
    // (NVRTC when $HIPACM_ARCH names an NVIDIA target, hipRTC otherwise).
    const backend::CompilerDescription compiler = backend::describe_compiler_for(out->default_arch);
    out->compiler = compiler.name == "nvrtc" ? "nvrtc" : "hiprtc";
    if (!compiler.available)
      return report(HIPACM_ERROR_BACKEND_UNAVAILABLE, function, compiler.error);
    out->available = 1;
    out->version = intern(compiler.version);
    out->library_path = intern(compiler.library_path);
    return HIPACM_SUCCESS;
  });
}
