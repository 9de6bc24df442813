// SPDX-License-Identifier: MIT
// remote_value_fuzz_key.h - the signing key and cache key that the remote value target and its
// seeds share.
#pragma once

#include <string_view>

namespace hipacm::fuzz {

/// The key the target verifies and signs with; its seeds are signed with it.
inline constexpr std::string_view kRemoteValueFuzzKey = "fuzz-remote-cache-signing-key-01";
/// The cache key the target asks every value to be for; its seeds' entries carry it.
inline constexpr std::string_view kRemoteValueFuzzEntryKey =
    "5e0f3c7a9b1d2e4f6a8c0b2d4e6f8a0c1e3f5a7b9c0d2e4f6a8b0c1d3e5f7a9b";

}  // namespace hipacm::fuzz
