// SPDX-License-Identifier: MIT
// rtc_options.cpp - the options that keep a compile from hipacm (separate compilation, outputs
// other than code, files the compiler writes) and the arch option of hipRTC and NVRTC.
#include "intercept/rtc_options.h"

#include <string_view>

namespace hipacm::intercept {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// NVRTC options whose output is not the code hipacm keeps (LTO IR, OptiX IR, relocatable code for
// the link calls) or that write files of their own (timing, traces, PCHs): compiled by NVRTC.
constexpr std::string_view kNvrtcUnserved[] = {
    "-dlto",
    "--dlink-time-opt",
    "-rdc",
    "--relocatable-device-code",
    "-dc",
    "--device-c",
    "-optix-ir",
    "--optix-ir",
    "-time",
    "--time",
    "-fdevice-time-trace",
    "--fdevice-time-trace",
    "-pch",
    "--pch",
    "-create-pch",
    "--create-pch",
    "-use-pch",
    "--use-pch",
    "-pch-dir",
    "--pch-dir",
    "-split-compile",
    "--split-compile",
    "-ewp",
    "--extensible-whole-program",
    "-fdevice-syntax-only",
    "--fdevice-syntax-only",
};

// NVRTC options whose output holds the compiling process's working directory (line tables name
// it): a worker compiles elsewhere, so NVRTC compiles them here.
constexpr std::string_view kNvrtcNamesDirectory[] = {
    "-lineinfo",
    "--generate-line-info",
    "-G",
    "--device-debug",
};

// An NVRTC option that names one of kNvrtcUnserved (its spelling alone or with a value), but for
// `=false` (relocatable code off is what NVRTC does anyway).
std::string nvrtc_unserved(std::string_view option) {
  for (std::string_view name : kNvrtcUnserved) {
    if (!starts_with(option, name)) continue;
    const std::string_view rest = option.substr(name.size());
    if (!rest.empty() && rest.front() != '=') continue;
    if (rest == "=false" || rest == "=0") return "";
    return std::string(name);
  }
  return "";
}

}  // namespace

std::string unservable_options(Rtc rtc, int num_options, const char* const* options,
                               std::string* arch) {
  if (num_options < 0 || (num_options > 0 && options == nullptr)) return "unusual arguments";
  const bool hip = rtc == Rtc::kHiprtc;
  for (int i = 0; i < num_options; ++i) {
    if (options[i] == nullptr) return "unusual arguments";
    const std::string_view option = options[i];
    if (hip) {
      // Separately compiled device code is for hipRTC's link calls, which are not served.
      if (option == "-fgpu-rdc") return "-fgpu-rdc";
    } else {
      if (std::string unserved = nvrtc_unserved(option); !unserved.empty()) return unserved;
      for (std::string_view name : kNvrtcNamesDirectory)
        if (option == name) return "line info";
      // The arch in the next argument: a spelling the shim does not read.
      if (option == "-arch" || option == "--gpu-architecture") return "unusual arguments";
    }
    const std::string_view hip_prefixes[] = {"--offload-arch=", "--gpu-architecture="};
    const std::string_view nv_prefixes[] = {"-arch=", "--gpu-architecture="};
    for (std::string_view prefix : hip ? hip_prefixes : nv_prefixes) {
      if (!starts_with(option, prefix)) continue;
      const std::string_view value = option.substr(prefix.size());
      if (!arch->empty() && *arch != value) return "several archs";
      *arch = value;
    }
  }
  // hipRTC asks the GPU; NVRTC has a default the caller looks up.
  if (hip && arch->empty()) return "no arch option";
  return "";
}

}  // namespace hipacm::intercept
