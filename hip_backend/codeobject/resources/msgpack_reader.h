// SPDX-License-Identifier: MIT
// msgpack_reader.h - a bounded MessagePack reader for untrusted bytes (the AMDGPU metadata note):
// every length is checked against what is left, with caps on depth, item count and string size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

/// One decoded MessagePack value. Extension types keep only their type byte; their data is
/// skipped, as no reader here needs it.
struct MsgpackValue {
  enum class Kind { Nil, Bool, Unsigned, Signed, Float, String, Binary, Array, Map, Extension };
  Kind kind = Kind::Nil;
  bool boolean = false;
  std::uint64_t unsigned_value = 0;  ///< Unsigned
  std::int64_t signed_value = 0;     ///< Signed (always negative: MessagePack's int family)
  double float_value = 0;            ///< Float (float 32 widened)
  std::string bytes;                 ///< String and Binary; Extension: nothing
  std::int8_t extension_type = 0;
  std::vector<MsgpackValue> items;  ///< Array
  /// Map: keys and values side by side, in stored order (a std::pair member would need the
  /// complete type here).
  std::vector<MsgpackValue> keys;
  std::vector<MsgpackValue> values;

  /// A map's value under a string key (the first, if a hostile map repeats it); else nullptr.
  const MsgpackValue* find(std::string_view key) const noexcept;
  /// A non-negative integer, whichever encoding carried it; nullopt for any other kind.
  std::optional<std::uint64_t> as_unsigned() const noexcept;
  /// A string's text; nullopt for any other kind.
  std::optional<std::string_view> as_string() const noexcept;
};

struct MsgpackLimits {
  std::size_t max_bytes = 16u << 20;  ///< the whole input
  unsigned max_depth = 32;            ///< nested arrays and maps
  std::size_t max_values = 1u << 18;  ///< values in the whole document
  std::size_t max_string = 1u << 20;  ///< one string or binary
};

/// Decodes exactly one value that fills the input (trailing bytes are an error). Failures carry
/// HIPACM_ERROR_COMPILATION and say what was wrong and where ("msgpack: ... at byte N").
Expected<MsgpackValue> read_msgpack(const std::uint8_t* data, std::size_t size,
                                    const MsgpackLimits& limits = {});

}  // namespace hipacm::backend
