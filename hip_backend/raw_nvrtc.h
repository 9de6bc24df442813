// SPDX-License-Identifier: MIT
// raw_nvrtc.h - the marker option that asks for a CUDA program's NVRTC compile exactly as given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hipacm::backend {

/// The first option of a request for an NVIDIA arch that NVRTC compiles exactly as a CUDA program
/// gave it (`hipacm run`'s intercepted nvrtcCompileProgram): the options after it unchanged, the
/// request's headers only, no HIP prelude; and with the NVRTC file the program called (another
/// release, or a pip wheel's copy under the same soname, may make other bytes: a worker loads
/// that file, nvrtc_api.h's load_nvrtc_file), which its value names by its resolved path in hex (a
/// path would make the cache's include scan refuse the request as naming a file). An option rather
/// than a request field, so that it reaches the workers and the cache key with no change to either
/// format; NVRTC has no option spelled so. The intercept entry (plugin/abi/intercept_entry.cpp)
/// adds it.
inline constexpr std::string_view kRawNvrtcOption = "--hipacm-raw-nvrtc-program=";

/// The marker for the NVRTC at `library_file` (a resolved path).
inline std::string raw_nvrtc_option(const std::string& library_file) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string option(kRawNvrtcOption);
  for (const char c : library_file) {
    option += kDigits[static_cast<unsigned char>(c) >> 4];
    option += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return option;
}

/// The file a marker names (the request's first option), or "" when its value is not hex of a
/// path (the value comes from a request: it is checked, never trusted).
inline std::string raw_nvrtc_library(const std::vector<std::string>& options) {
  if (options.empty() || options.front().compare(0, kRawNvrtcOption.size(), kRawNvrtcOption) != 0)
    return "";
  const std::string_view hex = std::string_view(options.front()).substr(kRawNvrtcOption.size());
  if (hex.empty() || hex.size() % 2 != 0 || hex.size() > 2 * 4096) return "";
  auto digit = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  std::string file;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]), low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return "";
    const char c = static_cast<char>(high * 16 + low);
    if (c == '\0') return "";
    file += c;
  }
  return file.front() == '/' ? file : "";
}

/// Whether `options` start with the marker.
inline bool is_raw_nvrtc(const std::vector<std::string>& options) {
  return !options.empty() &&
         options.front().compare(0, kRawNvrtcOption.size(), kRawNvrtcOption) == 0;
}

}  // namespace hipacm::backend
