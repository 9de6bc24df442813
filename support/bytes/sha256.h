// SPDX-License-Identifier: MIT
// sha256.h - incremental SHA-256 (Nettle's, lock-free and fork-safe), with injective field
// encoding.
#pragma once

#include <nettle/sha2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hipacm {

/// One SHA-256 computation. All of its state is in this object: it takes no lock and touches no
/// global state, so any thread may hash at any time, including in the child of a fork() that
/// another thread made while hashing. Never fails.
class Sha256 {
 public:
  Sha256() noexcept;

  void add_bytes(const void* data, std::size_t size) noexcept;
  /// Length-prefixed, so ("ab","c") and ("a","bc") hash differently.
  void add_field(std::string_view s) noexcept;
  void add_count(std::uint64_t n) noexcept;
  /// Finishes the computation: 64 lowercase hex digits. The object then starts a new one.
  std::string hex();

 private:
  sha256_ctx ctx_;
};

/// SHA-256 of one buffer, as hex.
std::string sha256_hex(const void* data, std::size_t size);

}  // namespace hipacm
