// SPDX-License-Identifier: MIT
// fuzz_input.h - reads the fields of a structured value (numbers, strings, a tail) from fuzz bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hipacm::fuzz {

/// Consumes a fuzz input front to back. Every read is clamped to the bytes
/// that remain, and an exhausted input reads as zeros and empty strings, so
/// any byte string decodes to some value and mutations stay meaningful.
class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}

  std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }

  std::uint8_t u8() { return static_cast<std::uint8_t>(le(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
  std::uint64_t u64() { return le(8); }

  /// A u16 length prefix, then that many bytes (fewer at the end of the input).
  std::string str() {
    const std::size_t wanted = u16();  // read before remaining(): argument order is unspecified
    const std::size_t n = std::min(wanted, remaining());
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

  /// Everything not read yet.
  std::vector<std::uint8_t> rest() {
    std::vector<std::uint8_t> out(p_, end_);
    p_ = end_;
    return out;
  }

 private:
  std::uint64_t le(std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n && p_ != end_; ++i) v |= std::uint64_t{*p_++} << (8 * i);
    return v;
  }

  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

/// Appends the fields in the layout FuzzInput reads: seeds are written with it.
class FuzzOutput {
 public:
  void u8(std::uint8_t v) { le(v, 1); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void str(const std::string& s) {
    u16(static_cast<std::uint16_t>(s.size()));
    bytes_.insert(bytes_.end(), s.begin(), s.begin() + std::min<std::size_t>(s.size(), 0xffff));
  }
  void raw(const std::vector<std::uint8_t>& b) { bytes_.insert(bytes_.end(), b.begin(), b.end()); }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> bytes_;
};

/// Stops the process with a message: a broken invariant is a finding, like a crash.
[[noreturn]] void invariant_broken(const std::string& what);

/// Whether a decoder's `decoded` result holds a value. A decoder may refuse any input, but never
/// without saying why: a refusal with an empty message is the broken invariant `unexplained`.
template <class Decoded>
bool accepted_or_explained(const Decoded& decoded, const std::string& unexplained) {
  if (decoded) return true;
  if (decoded.failure().message.empty()) invariant_broken(unexplained);
  return false;
}

}  // namespace hipacm::fuzz
