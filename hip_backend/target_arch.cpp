// target_arch.cpp - which platform an arch names, and validation against that platform's compiler.
#include "hip_backend/target_arch.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/compiler_identity.h"
#include "hip_backend/nvrtc/nvrtc_api.h"

namespace hipacm::backend {

namespace {

constexpr std::string_view kCubinPrefix = "sm_";
constexpr std::string_view kPtxPrefix = "compute_";

// The number in "sm_90a", or -1 when the text after the prefix is not
// digits with an optional 'a' (arch-specific features) suffix.
int arch_number(std::string_view arch) {
  std::string_view rest = arch.starts_with(kCubinPrefix) ? arch.substr(kCubinPrefix.size())
                                                         : arch.substr(kPtxPrefix.size());
  if (rest.ends_with('a')) rest.remove_suffix(1);
  int number = -1;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
  if (rest.empty() || ec != std::errc() || end != rest.data() + rest.size()) return -1;
  return number;
}

std::string supported_list(const std::vector<int>& archs) {
  std::string list;
  for (int number : archs) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(number);
  return list;
}

}  // namespace

bool is_nvidia_arch(const std::string& arch) {
  return arch.starts_with(kCubinPrefix) || arch.starts_with(kPtxPrefix);
}

bool is_ptx_arch(const std::string& arch) { return arch.starts_with(kPtxPrefix); }

hipacm_status validate_nvidia_arch(const std::string& arch, std::string* error) {
  std::string load_error;
  const NvrtcApi* api = load_nvrtc(&load_error);
  if (api == nullptr) {
    *error = "arch '" + arch + "' needs NVRTC: " + load_error;
    return HIPACM_ERROR_BACKEND_UNAVAILABLE;
  }
  const int number = is_nvidia_arch(arch) ? arch_number(arch) : -1;
  const auto& supported = api->supported_archs;
  if (number >= 0 && std::find(supported.begin(), supported.end(), number) != supported.end()) {
    return HIPACM_SUCCESS;
  }
  *error = "unknown NVIDIA arch '" + arch + "'; NVRTC " + api->version + " supports " +
           (supported.empty() ? std::string("none (nvrtcGetSupportedArchs failed)")
                              : supported_list(supported)) +
           " (as sm_XX for CUBIN or compute_XX for PTX, optionally with an 'a' suffix)";
  return HIPACM_ERROR_INVALID_ARGUMENT;
}

hipacm_status validate_arch(const std::string& arch, std::string* error, LibraryFactMemo* memo) {
  if (is_nvidia_arch(arch)) return validate_nvidia_arch(arch, error);
  if (!validate_amdgpu_arch(arch, error, memo)) {
    // comgr missing means no compiler at all, not a bad argument.
    std::string ignored;
    return supported_amdgpu_processors(&ignored, memo).empty() ? HIPACM_ERROR_BACKEND_UNAVAILABLE
                                                               : HIPACM_ERROR_INVALID_ARGUMENT;
  }
  // A valid arch with no hipRTC to compile it would fail every compile alike.
  const CompilerIdentity compiler = compiler_identity(arch, memo);
  if (compiler.version.empty()) {
    *error = "arch '" + arch + "' needs hipRTC: " + compiler.error;
    return HIPACM_ERROR_BACKEND_UNAVAILABLE;
  }
  return HIPACM_SUCCESS;
}

}  // namespace hipacm::backend
