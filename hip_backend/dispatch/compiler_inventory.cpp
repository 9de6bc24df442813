// SPDX-License-Identifier: MIT
// compiler_inventory.cpp - describes hipRTC and NVRTC as this process finds them.
#include "hip_backend/dispatch/compiler_inventory.h"

#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

// Both loaders answer alike: their table (with version and path) or the reason.
template <class Api>
CompilerDescription describe(const char* name, const char* platform,
                             const Expected<const Api*>& loaded) {
  CompilerDescription out;
  out.name = name;
  out.platform = platform;
  if (!loaded) {
    out.error = loaded.failure().message;
    return out;
  }
  const Api* api = loaded.value();
  out.available = true;
  out.version = api->version;
  out.library_path = api->library_path;
  return out;
}

CompilerDescription describe_hiprtc() { return describe("hiprtc", "amd", load_hiprtc()); }

CompilerDescription describe_nvrtc() { return describe("nvrtc", "nvidia", load_nvrtc()); }

}  // namespace

CompilerDescription describe_compiler_for(const std::string& arch) {
  return is_nvidia_arch(arch) ? describe_nvrtc() : describe_hiprtc();
}

std::vector<CompilerDescription> describe_compilers() {
  return {describe_hiprtc(), describe_nvrtc()};
}

}  // namespace hipacm::backend
