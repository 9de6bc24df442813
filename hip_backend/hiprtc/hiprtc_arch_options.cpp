// SPDX-License-Identifier: MIT
// hiprtc_arch_options.cpp - the request's archs checked and hipRTC's target option chosen.
#include "hip_backend/hiprtc/hiprtc_arch_options.h"

#include <algorithm>
#include <string_view>

#include "hip_backend/rtc/runtime_compile_program.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

constexpr std::string_view kArchOptions[] = {"--gpu-architecture=", "--offload-arch="};

// hipRTC's switch for separately linked device code, which yields no SPIR-V.
constexpr std::string_view kRelocatableDeviceCode = "-fgpu-rdc";

std::string_view processor_of(std::string_view arch) { return arch.substr(0, arch.find(':')); }

// The features after the processor, sorted: "gfx90a:xnack-:sramecc+" and "gfx90a:sramecc+:xnack-"
// name one target.
std::vector<std::string_view> features_of(std::string_view arch) {
  std::vector<std::string_view> features;
  std::size_t colon = arch.find(':');
  while (colon != std::string_view::npos) {
    const std::size_t next = arch.find(':', colon + 1);
    features.push_back(
        arch.substr(colon + 1, next == std::string_view::npos ? next : next - colon - 1));
    colon = next;
  }
  std::sort(features.begin(), features.end());
  return features;
}

void refuse(const std::string& message) { fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, message); }

// Whether the caller's options name the arch; each one they name is checked.
bool options_name_arch(const CompileRequest& request, const ArchValidator& validate) {
  bool has_arch = false;
  for (const std::string& option : request.options) {
    require_no_nul(option, "option");
    for (std::string_view prefix : kArchOptions) {
      const std::string_view bare = prefix.substr(0, prefix.size() - 1);
      if (option == bare) {
        refuse("option '" + option + "' needs its value after '=' (" + std::string(prefix) +
               "gfx90a)");
      }
      if (!option.starts_with(prefix)) continue;
      const std::string value = option.substr(prefix.size());
      if (const Expected<void> valid = validate(value); !valid)
        refuse("option '" + option + "': " + valid.failure().message);
      // The result is checked and cached as the request's arch: an option that names other
      // features would yield code for a target the request does not name.
      if (processor_of(value) != processor_of(request.arch)) {
        refuse("option '" + option + "' conflicts with the arch '" + request.arch +
               "' of the request");
      }
      if (features_of(value) != features_of(request.arch)) {
        refuse("option '" + option + "' conflicts with the arch '" + request.arch +
               "' of the request: its features differ (give them in the arch)");
      }
      has_arch = true;
    }
  }
  return has_arch;
}

void check_spirv_request(const CompileRequest& request) {
  if (!request.name_expressions.empty()) {
    refuse(
        "amdgcnspirv takes no name expressions: hipRTC lowers no names in SPIR-V output "
        "(declare the kernels extern \"C\" and look them up by name)");
  }
  if (std::find(request.options.begin(), request.options.end(), kRelocatableDeviceCode) !=
      request.options.end()) {
    refuse("amdgcnspirv cannot be combined with option '" + std::string(kRelocatableDeviceCode) +
           "': hipRTC emits no SPIR-V for separately linked device code");
  }
}

}  // namespace

std::vector<std::string> hiprtc_arch_options(const CompileRequest& request,
                                             const ArchValidator& validate) {
  if (const Expected<void> valid = validate(request.arch); !valid) refuse(valid.failure().message);
  const bool named = options_name_arch(request, validate);
  const bool spirv = request.arch == kAmdgcnSpirvArch;
  if (spirv) check_spirv_request(request);
  if (named) return {};
  // hipRTC renames --gpu-architecture to --offload-arch; for SPIR-V the latter is asked for
  // directly, as clang spells it, rather than relying on that renaming.
  return {std::string(spirv ? "--offload-arch=" : "--gpu-architecture=") + request.arch};
}

}  // namespace hipacm::backend
