// SPDX-License-Identifier: MIT
// struct_versions.h - the sizes of the versions of each caller-filled ABI struct.
#pragma once

#include <hipacm/hipacm.h>

#include <cstddef>
#include <cstdint>

namespace hipacm {

// Version 1 ends at its last field: anything smaller is an ABI mismatch, and
// fields past a caller's struct_size take their defaults.
inline constexpr std::size_t kModeConfigV1Size =
    offsetof(hipacm_mode_config, arch) + sizeof(const char*);
// Versions 2 (ABI 1.1) and 3 (ABI 1.2, unchanged in 1.3): what those headers'
// sizeof(hipacm_mode_config) is, and what the provider table granted for that
// minor fills.
inline constexpr std::size_t kModeConfigV2Size =
    offsetof(hipacm_mode_config, compile_timeout_ms) + sizeof(std::uint32_t);
inline constexpr std::size_t kModeConfigV3Size =
    offsetof(hipacm_mode_config, load_device) + sizeof(std::int32_t);
// Version 4 (ABI 1.4): cache_failures, and a reserved field that keeps the
// struct free of tail padding.
inline constexpr std::size_t kModeConfigV4Size =
    offsetof(hipacm_mode_config, reserved_1_4) + sizeof(std::int32_t);
static_assert(kModeConfigV1Size % alignof(hipacm_mode_config) == 0 &&
                  kModeConfigV2Size % alignof(hipacm_mode_config) == 0 &&
                  kModeConfigV3Size % alignof(hipacm_mode_config) == 0 &&
                  kModeConfigV4Size % alignof(hipacm_mode_config) == 0,
              "each version ends where that header's sizeof ends (no tail padding)");
// Version 5 (ABI 1.5): remote_cache.
inline constexpr std::size_t kModeConfigV5Size =
    offsetof(hipacm_mode_config, remote_cache) + sizeof(const char*);
static_assert(kModeConfigV5Size == sizeof(hipacm_mode_config),
              "a field appended to hipacm_mode_config needs a version size here and a "
              "provider table in provider.cpp");
inline constexpr std::size_t kRequestV1Size = offsetof(hipacm_request, user_data) + sizeof(void*);
inline constexpr std::size_t kStatsV1Size =
    offsetof(hipacm_stats, cached_failures) + sizeof(std::uint64_t);
// Version 2 (ABI 1.5): the remote cache's counters.
inline constexpr std::size_t kStatsV2Size =
    offsetof(hipacm_stats, remote_waits) + sizeof(std::uint64_t);
static_assert(kStatsV2Size == sizeof(hipacm_stats),
              "a field appended to hipacm_stats needs a version size here");
inline constexpr std::size_t kBackendInfoV1Size =
    offsetof(hipacm_backend_info, default_arch) + sizeof(const char*);

}  // namespace hipacm
