// struct_versions.h - the size of version 1 of each caller-filled ABI struct.
#pragma once

#include <hipacm/hipacm.h>

#include <cstddef>

namespace hipacm {

// Version 1 ends at its last field: anything smaller is an ABI mismatch, and
// fields past a caller's struct_size take their defaults.
inline constexpr std::size_t kModeConfigV1Size =
    offsetof(hipacm_mode_config, arch) + sizeof(const char*);
inline constexpr std::size_t kRequestV1Size = offsetof(hipacm_request, user_data) + sizeof(void*);
inline constexpr std::size_t kBackendInfoV1Size =
    offsetof(hipacm_backend_info, default_arch) + sizeof(const char*);

}  // namespace hipacm
