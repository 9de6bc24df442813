// SPDX-License-Identifier: MIT
// offload_bundle.h - a bounds-checked reader of uncompressed clang offload bundles (the HIP fat
// binary format): the entries' ids and where their bytes lie.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

inline constexpr std::string_view kOffloadBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
/// The magic of a compressed bundle, which hipacm does not unpack.
inline constexpr std::string_view kCompressedBundleMagic = "CCOB";

struct OffloadBundleEntry {
  std::string id;  ///< "<kind>-<triple>-<target id>", e.g. "hip-amdgcn-amd-amdhsa--gfx90a"
  std::uint64_t offset = 0;  ///< from the start of the bundle; offset + size lies inside it
  std::uint64_t size = 0;
};

/// True when the bytes start with the uncompressed or the compressed bundle magic.
bool looks_like_offload_bundle(const std::uint8_t* data, std::size_t size);

/// Lists the entries of an uncompressed offload bundle. Every count, length and offset is
/// checked against the image before use; a compressed bundle, a truncated entry table, an empty
/// or oversized or non-printable id, or an entry whose bytes leave the image is an error
/// ("invalid offload bundle: ...", HIPACM_ERROR_COMPILATION).
Expected<std::vector<OffloadBundleEntry>> read_offload_bundle(const std::uint8_t* data,
                                                              std::size_t size);

}  // namespace hipacm::backend
