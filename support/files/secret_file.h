// SPDX-License-Identifier: MIT
// secret_file.h - reads a small secret (a key, a password) from a file only its owner can read.
#pragma once

#include <cstddef>
#include <string>

namespace hipacm::backend {

/// The secret's bytes, or an empty string with *why (when given) set: a message that names the
/// path and what is wrong, never the contents. The file must be a regular file (not a link, not a
/// FIFO), owned by this user, with no group or other permission bits (0600 or 0400), and hold
/// `min_bytes` to `max_bytes` once one trailing newline ("\n" or "\r\n") is dropped. Larger files
/// are refused unread.
std::string read_secret_file(const std::string& path, std::size_t min_bytes, std::size_t max_bytes,
                             std::string* why);

/// Overwrites `secret` with zeros in a way the compiler keeps, then empties it.
void wipe_secret(std::string& secret) noexcept;

}  // namespace hipacm::backend
