// SPDX-License-Identifier: MIT
// remote_value.h - the bytes a remote cache entry is stored as in Redis: a cache entry, signed,
// and its bounded decoding, which trusts nothing the bytes say about themselves.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "plugin/cache/remote/signing_key.h"
#include "plugin/cache/store/entry.h"
#include "support/failure.h"

namespace hipacm::cache::remote {

/// The largest value put or accepted (a code object of every arch of a large program fits).
inline constexpr std::size_t kMaxRemoteValueBytes = std::size_t{64} << 20;

/// The entry as a remote value: a magic and format version, the entry's key, labels, lowered
/// names, log, code and checksum, each length-prefixed, then the key's HMAC-SHA256 of all that.
/// The signature covers the entry's key, so a value copied under another key is refused.
std::string encode_remote_value(const CacheEntry& entry, const SigningKey& key);

/// The entry that `value` holds, when it verifies against `key`, was made for `expected_key`,
/// and every field is within its bound: the signature is checked before anything else is read.
/// An INVALID_ARGUMENT failure says which check failed (never echoing the value's bytes).
/// The caller still checks the entry against the request (validate_entry_for_request).
Expected<CacheEntry> decode_remote_value(std::string_view value, std::string_view expected_key,
                                         const SigningKey& key);

}  // namespace hipacm::cache::remote
