// compiler_inventory.cpp - describes hipRTC and NVRTC as this process finds them.
#include "hip_backend/compiler_inventory.h"

#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

CompilerDescription describe_hiprtc() {
  CompilerDescription out;
  out.name = "hiprtc";
  out.platform = "amd";
  const HiprtcApi* api = load_hiprtc(&out.error);
  if (api == nullptr) return out;
  out.available = true;
  out.version = api->version;
  out.library_path = api->library_path;
  return out;
}

CompilerDescription describe_nvrtc() {
  CompilerDescription out;
  out.name = "nvrtc";
  out.platform = "nvidia";
  const NvrtcApi* api = load_nvrtc(&out.error);
  if (api == nullptr) return out;
  out.available = true;
  out.version = api->version;
  out.library_path = api->library_path;
  return out;
}

}  // namespace

CompilerDescription describe_compiler_for(const std::string& arch) {
  return is_nvidia_arch(arch) ? describe_nvrtc() : describe_hiprtc();
}

std::vector<CompilerDescription> describe_compilers() {
  return {describe_hiprtc(), describe_nvrtc()};
}

}  // namespace hipacm::backend
