// SPDX-License-Identifier: MIT
// byte_reader.h - bounded little-endian reads of untrusted bytes: no offset, length or count can
// reach past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace hipacm::backend {

/// Random access into bytes that may be hostile (a cache blob, a frame from another process).
class ByteView {
 public:
  ByteView(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

  std::size_t size() const noexcept { return size_; }

  /// Whether [offset, offset + length) lies inside, however large the two are.
  bool contains(std::uint64_t offset, std::uint64_t length) const noexcept {
    return offset <= size_ && length <= size_ - offset;
  }

  /// The little-endian unsigned integer at `offset`; 0 when it does not lie inside.
  template <class T>
  T le(std::uint64_t offset) const noexcept {
    static_assert(std::is_unsigned_v<T>);
    if (!contains(offset, sizeof(T))) return 0;
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value |= static_cast<T>(static_cast<T>(data_[offset + i]) << (8 * i));
    }
    return value;
  }

  /// The bytes [offset, offset + length) as text; empty when they do not lie inside.
  std::string_view text(std::uint64_t offset, std::uint64_t length) const noexcept {
    if (!contains(offset, length)) return {};
    return {reinterpret_cast<const char*>(data_ + offset), static_cast<std::size_t>(length)};
  }

  /// Where [offset, offset + length) starts, or nullptr when it does not lie inside.
  const std::uint8_t* at(std::uint64_t offset, std::uint64_t length) const noexcept {
    return contains(offset, length) ? data_ + offset : nullptr;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
};

/// Reads from the front of a ByteView; a read that does not fit consumes nothing and fails.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) noexcept : bytes_(data, size) {}

  std::size_t remaining() const noexcept { return bytes_.size() - offset_; }

  /// The next little-endian unsigned integer.
  template <class T>
  bool le(T* value) noexcept {
    if (remaining() < sizeof(T)) return false;
    *value = bytes_.le<T>(offset_);
    offset_ += sizeof(T);
    return true;
  }

  /// The next `length` bytes, in place.
  bool take(std::size_t length, const std::uint8_t** bytes) noexcept {
    if (length > remaining()) return false;
    *bytes = bytes_.at(offset_, length);
    offset_ += length;
    return true;
  }

 private:
  ByteView bytes_;
  std::size_t offset_ = 0;
};

}  // namespace hipacm::backend
