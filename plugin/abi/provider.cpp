// SPDX-License-Identifier: MIT
// provider.cpp - hipacm_get_provider: the one symbol a host needs to dlsym, and its version tables.
#include <hipacm/hipacm.h>

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "plugin/abi/struct_versions.h"

namespace {

// The provider's mode_config_init for a host built against the header whose
// hipacm_mode_config is `Size` bytes: the host's natural
// `hp->mode_config_init(&cfg); cfg.isolation = ...;` then covers every field
// it can set, and never writes past its struct.
template <std::size_t Size>
void init_mode_config(hipacm_mode_config* cfg) {
  hipacm_mode_config_init_sized(cfg, Size);
}

constexpr hipacm_provider make_provider(std::uint32_t granted,
                                        void (*mode_config_init)(hipacm_mode_config*)) {
  return hipacm_provider{
      sizeof(hipacm_provider),
      granted,
      "hipacm",
      HIPACM_VERSION_STRING,
      mode_config_init,
      &hipacm_mode_enter,
      &hipacm_mode_exit,
      &hipacm_active_mode,
      &hipacm_submit,
      &hipacm_compile,
      &hipacm_future_wait,
      &hipacm_future_status,
      &hipacm_future_result,
      &hipacm_future_key,
      &hipacm_future_log,
      &hipacm_future_error_message,
      &hipacm_future_retain,
      &hipacm_future_release,
      &hipacm_status_string,
      &hipacm_last_error_message,
      &hipacm_get_backend_info,
      &hipacm_mode_config_init_sized,
      &hipacm_set_log_callback,
      &hipacm_get_stats,
  };
}

// Constant-initialised (function addresses and literals only): no global
// constructor runs when the plugin is loaded.

// For a plain `1`, what every header before ABI 1.3 requested: the 1.0 table,
// whose (deprecated) mode_config_init fills version 1 only, because such a
// host's struct may be the 1.0 one.
constexpr hipacm_provider kPlainMajorProvider =
    make_provider(HIPACM_ABI_VERSION_MAJOR, &(hipacm_mode_config_init));

// For an encoded 1.<minor> request, indexed by minor; the last entry also
// serves minors newer than this plugin.
constexpr hipacm_provider kProviderByMinor[] = {
    make_provider(HIPACM_ABI_VERSION_ENCODE(1, 0), &init_mode_config<hipacm::kModeConfigV1Size>),
    make_provider(HIPACM_ABI_VERSION_ENCODE(1, 1), &init_mode_config<hipacm::kModeConfigV2Size>),
    make_provider(HIPACM_ABI_VERSION_ENCODE(1, 2), &init_mode_config<hipacm::kModeConfigV3Size>),
    make_provider(HIPACM_ABI_VERSION_ENCODE(1, 3), &init_mode_config<hipacm::kModeConfigV3Size>),
    make_provider(HIPACM_ABI_VERSION_ENCODE(1, 4), &init_mode_config<hipacm::kModeConfigV4Size>),
    make_provider(HIPACM_ABI_VERSION_ENCODE(1, 5), &init_mode_config<hipacm::kModeConfigV5Size>),
};
constexpr std::uint32_t kNewestMinor = std::size(kProviderByMinor) - 1;
static_assert(kNewestMinor == HIPACM_ABI_VERSION_MINOR,
              "every minor of the header needs its provider table");

}  // namespace

extern "C" HIPACM_API const hipacm_provider* hipacm_get_provider(uint32_t abi_version) {
  if (abi_version == HIPACM_ABI_VERSION_MAJOR) return &kPlainMajorProvider;
  if (HIPACM_ABI_VERSION_MAJOR_OF(abi_version) != HIPACM_ABI_VERSION_MAJOR) return nullptr;
  const std::uint32_t minor = HIPACM_ABI_VERSION_MINOR_OF(abi_version);
  return &kProviderByMinor[minor < kNewestMinor ? minor : kNewestMinor];
}
