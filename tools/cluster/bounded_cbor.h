// SPDX-License-Identifier: MIT
// bounded_cbor.h - reading CBOR that another rank sent: a non-recursive shape check, then the DOM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "support/failure.h"

namespace hipacm::cli {

/// Messages nest a few levels; a decoder that recursed as deep as the bytes ask would overflow.
inline constexpr std::size_t kMaxCborDepth = 16;

/// True when `bytes` hold exactly one CBOR data item in the subset hipacm's encoder writes:
/// definite lengths only (no indefinite-length strings, arrays or maps, no break), no tags, no
/// reserved additional information, containers nested at most kMaxCborDepth levels, and every
/// length within the bytes that follow. Walks the bytes with an explicit, bounded stack, so no
/// input can make it recurse. An INVALID_ARGUMENT failure names the first byte it refuses.
Expected<void> check_cbor_shape(const std::uint8_t* bytes, std::size_t size);

/// Decodes CBOR from another rank once check_cbor_shape accepts it; anything else is an
/// INVALID_ARGUMENT failure. Every message between ranks is read through it.
Expected<nlohmann::json> parse_bounded_cbor(const std::uint8_t* bytes, std::size_t size);

}  // namespace hipacm::cli
