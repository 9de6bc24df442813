// SPDX-License-Identifier: MIT
// sha256.h - incremental SHA-256 through OpenSSL's EVP interface, with injective field encoding.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hipacm {

/// One SHA-256 computation. Throws std::runtime_error if OpenSSL fails (an INTERNAL status at the
/// boundary).
class Sha256 {
 public:
  Sha256();

  void add_bytes(const void* data, std::size_t size);
  /// Length-prefixed, so ("ab","c") and ("a","bc") hash differently.
  void add_field(std::string_view s);
  void add_count(std::uint64_t n);
  /// Finishes the computation: 64 lowercase hex digits.
  std::string hex();

 private:
  struct ContextDeleter {
    void operator()(EVP_MD_CTX* ctx) const noexcept { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, ContextDeleter> ctx_;
};

/// SHA-256 of one buffer, as hex.
std::string sha256_hex(const void* data, std::size_t size);

}  // namespace hipacm
