// SPDX-License-Identifier: MIT
// sha256.cpp - incremental SHA-256 through OpenSSL's EVP interface, with injective field encoding.
#include "support/sha256.h"

#include <stdexcept>

namespace hipacm {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("cannot initialise SHA-256");
}

void Sha256::add_bytes(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(ctx_.get(), data, size) != 1)
    throw std::runtime_error("SHA-256 update failed");
}

void Sha256::add_field(std::string_view s) {
  add_count(s.size());
  add_bytes(s.data(), s.size());
}

void Sha256::add_count(std::uint64_t n) { add_bytes(&n, sizeof n); }

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1)
    throw std::runtime_error("SHA-256 finalisation failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

std::string sha256_hex(const void* data, std::size_t size) {
  Sha256 sha;
  sha.add_bytes(data, size);
  return sha.hex();
}

}  // namespace hipacm
