// SPDX-License-Identifier: MIT
// hiprtc_release.cpp - the ROCm release of a hipRTC library, from its name or its install tree.
#include "hip_backend/hiprtc/hiprtc_release.h"

#include <array>

#include "hip_backend/hiprtc/rocm_toolchain.h"
#include "hip_backend/rocm_paths.h"
#include "support/libraries/dynamic_library.h"
#include "support/libraries/loaded_objects.h"

namespace hipacm::backend {

namespace {

// ROCm 6 and later ship hipRTC as its own library; ROCm 5 keeps it inside the HIP runtime.
constexpr std::array<std::string_view, 2> kLibraryStems = {"libhiprtc.so.", "libamdhip64.so."};

constexpr std::string_view kReleasePrefix = "ROCm ";

// A release number has at most a few digits; anything longer is not a version.
constexpr std::size_t kMaxDigits = 4;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads the digits at the front of `text` into *value, consuming them.
bool take_number(std::string_view* text, int* value) {
  std::size_t length = 0;
  int number = 0;
  while (length < text->size() && is_digit((*text)[length])) {
    if (length == kMaxDigits) return false;
    number = number * 10 + ((*text)[length] - '0');
    ++length;
  }
  if (length == 0) return false;
  *value = number;
  text->remove_prefix(length);
  return true;
}

HiprtcFacts facts_for_file(const std::string& path) {
  HiprtcFacts facts;
  facts.library = file_base_name(path);
  facts.release = parse_rocm_release(rocm_release_of(path));
  return facts;
}

}  // namespace

std::string to_string(RocmRelease release) {
  return std::to_string(release.major) + "." + std::to_string(release.minor);
}

std::optional<RocmRelease> parse_rocm_release(std::string_view text) {
  if (!text.starts_with(kReleasePrefix)) return std::nullopt;
  text.remove_prefix(kReleasePrefix.size());
  RocmRelease release;
  if (!take_number(&text, &release.major) || !text.starts_with('.')) return std::nullopt;
  text.remove_prefix(1);
  if (!take_number(&text, &release.minor)) return std::nullopt;
  if (!text.empty() && !text.starts_with('.')) return std::nullopt;
  return release;
}

HiprtcFacts hiprtc_facts_from(std::string_view text) {
  for (std::string_view stem : kLibraryStems) {
    const std::size_t at = text.find(stem);
    if (at == std::string_view::npos) continue;
    const std::size_t space = text.rfind(' ', at);
    const std::size_t begin = space == std::string_view::npos ? 0 : space + 1;
    const std::size_t end = text.find(' ', at);
    return facts_for_file(
        std::string(text.substr(begin, end == std::string_view::npos ? end : end - begin)));
  }
  return {};
}

HiprtcFacts loaded_hiprtc_facts() {
  const Expected<const RocmToolchain*> loaded = rocm_toolchain();
  if (!loaded) return {};
  const RocmToolchain* toolchain = loaded.value();
  // The real file's name carries the release ("libhiprtc.so.6.4.43484"), the soname does not.
  const std::string real = real_file_path(toolchain->hiprtc_path);
  HiprtcFacts facts;
  facts.library = file_base_name(real.empty() ? toolchain->hiprtc_path : real);
  facts.release = parse_rocm_release(toolchain->release);
  return facts;
}

}  // namespace hipacm::backend
