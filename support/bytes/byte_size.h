// SPDX-License-Identifier: MIT
// byte_size.h - byte counts as people write them ("512M", "1.5G", "100KiB") and as they read them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hipacm {

/// Reads a byte count: a whole number of bytes ("1048576", "4096B"), or a decimal number with a
/// unit K, M, G or T, optionally followed by "iB" (K = KiB = 1024; case does not matter: "5g").
/// SI spellings ("5GB", "100kB") are refused rather than guessed at, since they mean powers of
/// 1000 to some and of 1024 to others. A fraction of a unit rounds down to whole bytes. nullopt
/// for anything else: empty, negative, signs, spaces, exponents, more than 18 digits in all, or a
/// count above INT64_MAX.
std::optional<std::int64_t> parse_byte_size(std::string_view text);

/// Why `text` is not a byte count, for an error message: "'5GB' is ambiguous: ...".
std::string byte_size_problem(std::string_view text);

/// "512 B", "1.5 KiB", "2.0 GiB": one decimal, powers of 1024.
std::string human_bytes(std::int64_t bytes);

}  // namespace hipacm
