// SPDX-License-Identifier: MIT
// sha256.cpp - incremental SHA-256 through Nettle, with injective field encoding.
#include "support/bytes/sha256.h"

namespace hipacm {

Sha256::Sha256() noexcept { sha256_init(&ctx_); }

void Sha256::add_bytes(const void* data, std::size_t size) noexcept {
  sha256_update(&ctx_, size, static_cast<const std::uint8_t*>(data));
}

void Sha256::add_field(std::string_view s) noexcept {
  add_count(s.size());
  add_bytes(s.data(), s.size());
}

void Sha256::add_count(std::uint64_t n) noexcept { add_bytes(&n, sizeof n); }

std::string Sha256::hex() {
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx_, sizeof digest, digest);  // also resets the context
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof digest);
  for (const std::uint8_t byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xf]);
  }
  return out;
}

std::string sha256_hex(const void* data, std::size_t size) {
  Sha256 sha;
  sha.add_bytes(data, size);
  return sha.hex();
}

}  // namespace hipacm
