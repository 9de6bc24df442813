// SPDX-License-Identifier: MIT
// signing_key.h - the HMAC-SHA256 key that signs remote cache entries: read from a file only
// its owner can read, and wiped when dropped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "support/failure.h"

namespace hipacm::cache::remote {

/// Key files hold at least this many bytes (a short key is refused, not padded) and at most
/// kMaxKeyBytes (so a mistaken path to a large file is refused unread).
inline constexpr std::size_t kMinKeyBytes = 16;
inline constexpr std::size_t kMaxKeyBytes = 4096;
/// The length of mac()'s result.
inline constexpr std::size_t kMacBytes = 32;

class SigningKey {
 public:
  /// Reads the key file at `path`: a regular file (not a link), owned by this user and readable
  /// or writable by no one else (0600 or 0400), of kMinKeyBytes to kMaxKeyBytes. A trailing
  /// newline is not part of the key. An INVALID_ARGUMENT failure says what is wrong.
  static Expected<SigningKey> load(const std::string& path);
  /// A key from bytes already in hand (tests, tools that made one); at least kMinKeyBytes.
  static Expected<SigningKey> from_bytes(std::string_view bytes);

  SigningKey(SigningKey&& other) noexcept;
  SigningKey& operator=(SigningKey&& other) noexcept;
  SigningKey(const SigningKey&) = delete;
  SigningKey& operator=(const SigningKey&) = delete;
  ~SigningKey();

  /// HMAC-SHA256 of `data` under this key: kMacBytes raw bytes.
  std::string mac(std::string_view data) const;
  /// Whether `mac` is mac(data), compared in constant time.
  bool verify(std::string_view data, std::string_view mac) const;
  /// A short fingerprint (16 hex digits of a domain-separated SHA-256 of the key) that tells keys
  /// apart in reports without revealing them.
  std::string fingerprint() const;

 private:
  explicit SigningKey(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string bytes_;
};

}  // namespace hipacm::cache::remote
