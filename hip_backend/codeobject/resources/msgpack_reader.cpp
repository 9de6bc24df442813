// SPDX-License-Identifier: MIT
// msgpack_reader.cpp - decodes one MessagePack value with every length, count and nesting level
// checked before anything is read or allocated.
#include "hip_backend/codeobject/resources/msgpack_reader.h"

#include <cstring>

namespace hipacm::backend {

const MsgpackValue* MsgpackValue::find(std::string_view key) const noexcept {
  if (kind != Kind::Map) return nullptr;
  for (std::size_t i = 0; i < keys.size() && i < values.size(); ++i)
    if (keys[i].kind == Kind::String && keys[i].bytes == key) return &values[i];
  return nullptr;
}

std::optional<std::uint64_t> MsgpackValue::as_unsigned() const noexcept {
  if (kind == Kind::Unsigned) return unsigned_value;
  return std::nullopt;
}

std::optional<std::string_view> MsgpackValue::as_string() const noexcept {
  if (kind == Kind::String) return std::string_view(bytes);
  return std::nullopt;
}

namespace {

// MessagePack is big-endian; ByteView reads little-endian, so the bytes are taken one by one.
class Decoder {
 public:
  Decoder(const std::uint8_t* data, std::size_t size, const MsgpackLimits& limits)
      : data_(data), size_(size), limits_(limits) {}

  bool value(MsgpackValue* out, unsigned depth) {
    if (++values_ > limits_.max_values)
      return fail("more than " + std::to_string(limits_.max_values) + " values");
    std::uint64_t tag = 0;
    if (!be(1, &tag)) return fail("truncated: a value is missing");
    const auto t = static_cast<std::uint8_t>(tag);
    using K = MsgpackValue::Kind;
    if (t <= 0x7f) return set_unsigned(out, t);
    if (t >= 0xe0) {
      out->kind = K::Signed;
      out->signed_value = static_cast<std::int8_t>(t);
      return true;
    }
    if ((t & 0xf0) == 0x80) return map(out, t & 0x0f, depth);
    if ((t & 0xf0) == 0x90) return array(out, t & 0x0f, depth);
    if ((t & 0xe0) == 0xa0) return string(out, K::String, t & 0x1f);
    std::uint64_t n = 0;
    switch (t) {
      case 0xc0:
        out->kind = K::Nil;
        return true;
      case 0xc2:
      case 0xc3:
        out->kind = K::Bool;
        out->boolean = t == 0xc3;
        return true;
      case 0xc4:
      case 0xc5:
      case 0xc6:
        return be(std::size_t{1} << (t - 0xc4), &n) && string(out, K::Binary, n);
      case 0xc7:
      case 0xc8:
      case 0xc9:
        return be(std::size_t{1} << (t - 0xc7), &n) && extension(out, n);
      case 0xca:
      case 0xcb:
        return floating(out, t == 0xca ? 4 : 8);
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf:
        return be(std::size_t{1} << (t - 0xcc), &n) ? set_unsigned(out, n)
                                                    : fail("truncated integer");
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3:
        return signed_int(out, std::size_t{1} << (t - 0xd0));
      case 0xd4:
      case 0xd5:
      case 0xd6:
      case 0xd7:
      case 0xd8:
        return extension(out, std::uint64_t{1} << (t - 0xd4));
      case 0xd9:
      case 0xda:
      case 0xdb:
        return be(std::size_t{1} << (t - 0xd9), &n) && string(out, K::String, n);
      case 0xdc:
      case 0xdd:
        return be(t == 0xdc ? 2 : 4, &n) && array(out, n, depth);
      case 0xde:
      case 0xdf:
        return be(t == 0xde ? 2 : 4, &n) && map(out, n, depth);
      default:  // 0xc1 is never used
        return fail("unknown type byte " + std::to_string(t));
    }
  }

  bool at_end() const { return offset_ == size_; }
  std::size_t offset() const { return offset_; }
  std::string& error() { return error_; }

 private:
  bool fail(std::string message) {
    if (error_.empty())
      error_ = "msgpack: " + std::move(message) + " at byte " + std::to_string(offset_);
    return false;
  }

  std::size_t remaining() const { return size_ - offset_; }

  // A big-endian unsigned integer of `width` bytes (1, 2, 4 or 8).
  bool be(std::size_t width, std::uint64_t* out) {
    if (remaining() < width) return fail("truncated");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) v = (v << 8) | data_[offset_ + i];
    offset_ += width;
    *out = v;
    return true;
  }

  bool set_unsigned(MsgpackValue* out, std::uint64_t v) {
    out->kind = MsgpackValue::Kind::Unsigned;
    out->unsigned_value = v;
    return true;
  }

  bool signed_int(MsgpackValue* out, std::size_t width) {
    std::uint64_t raw = 0;
    if (!be(width, &raw)) return false;
    const unsigned shift = static_cast<unsigned>(64 - 8 * width);
    // Sign-extends from `width` bytes without shifting a negative number.
    const std::int64_t v =
        shift == 0 ? static_cast<std::int64_t>(raw)
                   : static_cast<std::int64_t>(raw << shift) / (std::int64_t{1} << shift);
    if (v >= 0) return set_unsigned(out, static_cast<std::uint64_t>(v));
    out->kind = MsgpackValue::Kind::Signed;
    out->signed_value = v;
    return true;
  }

  bool floating(MsgpackValue* out, std::size_t width) {
    std::uint64_t raw = 0;
    if (!be(width, &raw)) return false;
    out->kind = MsgpackValue::Kind::Float;
    if (width == 4) {
      float f = 0;
      const auto bits = static_cast<std::uint32_t>(raw);
      std::memcpy(&f, &bits, sizeof f);
      out->float_value = f;
    } else {
      std::memcpy(&out->float_value, &raw, sizeof raw);
    }
    return true;
  }

  bool string(MsgpackValue* out, MsgpackValue::Kind kind, std::uint64_t length) {
    if (length > limits_.max_string)
      return fail("a string of " + std::to_string(length) + " bytes (the limit is " +
                  std::to_string(limits_.max_string) + ")");
    if (length > remaining())
      return fail("a string of " + std::to_string(length) + " bytes with " +
                  std::to_string(remaining()) + " left");
    out->kind = kind;
    out->bytes.assign(reinterpret_cast<const char*>(data_ + offset_),
                      static_cast<std::size_t>(length));
    offset_ += static_cast<std::size_t>(length);
    return true;
  }

  bool extension(MsgpackValue* out, std::uint64_t length) {
    std::uint64_t type = 0;
    if (!be(1, &type)) return false;
    if (length > remaining())
      return fail("an extension of " + std::to_string(length) + " bytes with " +
                  std::to_string(remaining()) + " left");
    out->kind = MsgpackValue::Kind::Extension;
    out->extension_type = static_cast<std::int8_t>(static_cast<std::uint8_t>(type));
    offset_ += static_cast<std::size_t>(length);
    return true;
  }

  // Every element takes at least one byte, so a count larger than what is left is a lie, and
  // nothing is reserved before that is known.
  bool count_fits(std::uint64_t count, std::uint64_t bytes_each) {
    if (count > remaining() / bytes_each)
      return fail("a count of " + std::to_string(count) + " with " + std::to_string(remaining()) +
                  " bytes left");
    if (count > limits_.max_values - values_)
      return fail("more than " + std::to_string(limits_.max_values) + " values");
    return true;
  }

  bool array(MsgpackValue* out, std::uint64_t count, unsigned depth) {
    if (depth >= limits_.max_depth)
      return fail("nested deeper than " + std::to_string(limits_.max_depth));
    if (!count_fits(count, 1)) return false;
    out->kind = MsgpackValue::Kind::Array;
    out->items.resize(static_cast<std::size_t>(count));
    for (MsgpackValue& item : out->items)
      if (!value(&item, depth + 1)) return false;
    return true;
  }

  bool map(MsgpackValue* out, std::uint64_t count, unsigned depth) {
    if (depth >= limits_.max_depth)
      return fail("nested deeper than " + std::to_string(limits_.max_depth));
    if (!count_fits(count, 2)) return false;
    out->kind = MsgpackValue::Kind::Map;
    out->keys.resize(static_cast<std::size_t>(count));
    out->values.resize(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < out->keys.size(); ++i)
      if (!value(&out->keys[i], depth + 1) || !value(&out->values[i], depth + 1)) return false;
    return true;
  }

  const std::uint8_t* data_;
  std::size_t size_;
  MsgpackLimits limits_;
  std::size_t offset_ = 0;
  std::size_t values_ = 0;
  std::string error_;
};

}  // namespace

Expected<MsgpackValue> read_msgpack(const std::uint8_t* data, std::size_t size,
                                    const MsgpackLimits& limits) {
  if (size > limits.max_bytes)
    return Failure{HIPACM_ERROR_COMPILATION, "msgpack: " + std::to_string(size) +
                                                 " bytes (the limit is " +
                                                 std::to_string(limits.max_bytes) + ")"};
  if (data == nullptr && size != 0) return Failure{HIPACM_ERROR_COMPILATION, "msgpack: NULL data"};
  static constexpr std::uint8_t kEmpty = 0;
  Decoder decoder(data != nullptr ? data : &kEmpty, size, limits);
  MsgpackValue value;
  if (!decoder.value(&value, 0)) return Failure{HIPACM_ERROR_COMPILATION, decoder.error()};
  if (!decoder.at_end())
    return Failure{HIPACM_ERROR_COMPILATION, "msgpack: " + std::to_string(size - decoder.offset()) +
                                                 " bytes after the value"};
  return value;
}

}  // namespace hipacm::backend
