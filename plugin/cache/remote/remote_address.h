// SPDX-License-Identifier: MIT
// remote_address.h - where the remote cache is: a redis:// URL parsed into its parts, and shown
// without its password.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "support/failure.h"

namespace hipacm::cache::remote {

/// The parts of `redis://[user[:password]@]host[:port][/db]`.
struct RemoteAddress {
  std::string host;  ///< a name, an IPv4 address, or an IPv6 one without its brackets
  std::uint16_t port = 6379;
  std::string user;      ///< empty: Redis's default user
  std::string password;  ///< empty: none (or, later, the password file's)
  std::uint32_t db = 0;

  /// The URL with any password replaced by `***`: the only form that logs, reports and
  /// `hipacm doctor` ever show.
  std::string display() const;
};

/// The longest URL accepted; anything longer is refused unread.
inline constexpr std::size_t kMaxRemoteUrlBytes = 2048;

/// Parses `url`. The user and the password may be percent-encoded (`%40` for `@`). An
/// INVALID_ARGUMENT failure says what is wrong; its message never holds the password.
Expected<RemoteAddress> parse_remote_address(std::string_view url);

}  // namespace hipacm::cache::remote
