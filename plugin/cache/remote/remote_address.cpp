// SPDX-License-Identifier: MIT
// remote_address.cpp - parsing a redis:// URL into its parts, and its display form without the
// password.
#include "plugin/cache/remote/remote_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <optional>

namespace hipacm::cache::remote {
namespace {

// No message below quotes any part of the URL: a password typed without its '@' (or with a
// stray one) would land in the host, the port or the db, and from there in a log.
Failure invalid(std::string_view what) {
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                 "remote cache URL: " + std::string(what) +
                     " (expected redis://[user[:password]@]host[:port][/db])"};
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// `text` with every %XX replaced by its byte; nullopt for a malformed escape or an escaped NUL
/// (the password may end up in C strings).
std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    const char byte = static_cast<char>(high * 16 + low);
    if (byte == '\0') return std::nullopt;
    out += byte;
    i += 2;
  }
  return out;
}

/// Parses all of `digits` (ASCII digits only, no sign, no spaces) as a number up to `max`.
std::optional<std::uint32_t> parse_number(std::string_view digits, std::uint32_t max) {
  if (digits.empty() || digits.size() > 10) return std::nullopt;
  for (const char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value > max)
    return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

bool is_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (const char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return host.front() != '-' && host.front() != '.';
}

bool is_ipv6(const std::string& text) {
  in6_addr address{};
  return text.size() <= 45 && inet_pton(AF_INET6, text.c_str(), &address) == 1;
}

bool starts_with_scheme(std::string_view url, std::string_view scheme) {
  if (url.size() < scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    char c = url[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != scheme[i]) return false;
  }
  return true;
}

/// User and password from the part before the '@'.
Expected<void> parse_user_info(std::string_view info, RemoteAddress& address) {
  const std::size_t colon = info.find(':');
  auto user = percent_decode(info.substr(0, colon));
  if (!user) return invalid("malformed percent-escape in the user name");
  address.user = std::move(*user);
  if (colon != std::string_view::npos) {
    auto password = percent_decode(info.substr(colon + 1));
    if (!password) return invalid("malformed percent-escape in the password");
    address.password = std::move(*password);
  }
  return {};
}

/// Host and port from the part after the '@' and before the '/'.
Expected<void> parse_host_port(std::string_view authority, RemoteAddress& address) {
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return invalid("an IPv6 address lacks its ']'");
    address.host = std::string(authority.substr(1, close - 1));
    if (!is_ipv6(address.host)) return invalid("the bracketed host is not an IPv6 address");
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return invalid("unexpected text after the IPv6 address");
      has_port = true;
      port_text = rest.substr(1);
    }
  } else {
    const std::size_t colon = authority.find(':');
    address.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
    if (address.host.empty()) return invalid("the host is missing");
    if (!is_host_name(address.host))
      return invalid("the host is not a name or an address (IPv6 needs brackets)");
  }
  if (has_port) {
    const auto port = parse_number(port_text, 65535);
    if (!port || *port == 0) return invalid("the port is not a number from 1 to 65535");
    address.port = static_cast<std::uint16_t>(*port);
  }
  return {};
}

}  // namespace

Expected<RemoteAddress> parse_remote_address(std::string_view url) {
  if (url.size() > kMaxRemoteUrlBytes) return invalid("longer than 2048 bytes");
  for (const char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return invalid("spaces and control characters are not allowed");
  if (starts_with_scheme(url, "rediss://")) return invalid("TLS (rediss://) is not supported");
  constexpr std::string_view kScheme = "redis://";
  if (!starts_with_scheme(url, kScheme)) return invalid("the scheme is not redis://");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos)
    return invalid("query parameters and fragments are not supported");

  RemoteAddress address;
  // The last '@' ends the user info: host, port and db never hold one, a raw password might.
  const std::size_t at = rest.rfind('@');
  if (at != std::string_view::npos) {
    auto parsed = parse_user_info(rest.substr(0, at), address);
    if (!parsed) return std::move(parsed).failure();
    rest = rest.substr(at + 1);
  }
  const std::size_t slash = rest.find('/');
  auto parsed = parse_host_port(rest.substr(0, slash), address);
  if (!parsed) return std::move(parsed).failure();
  if (slash != std::string_view::npos) {
    const std::string_view db_text = rest.substr(slash + 1);
    if (!db_text.empty()) {
      const auto db = parse_number(db_text, 1000000);
      if (!db) return invalid("the db is not a number from 0 to 1000000");
      address.db = *db;
    }
  }
  return address;
}

namespace {

/// `text` with every byte other than RFC 3986's unreserved ones percent-encoded, so that the
/// display form parses back to the same user.
std::string percent_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

}  // namespace

std::string RemoteAddress::display() const {
  std::string out = "redis://";
  if (!user.empty() || !password.empty()) {
    out += percent_encode(user);
    if (!password.empty()) out += ":***";
    out += '@';
  }
  const bool ipv6 = host.find(':') != std::string::npos;
  out += ipv6 ? "[" + host + "]" : host;
  out += ':' + std::to_string(port) + '/' + std::to_string(db);
  return out;
}

}  // namespace hipacm::cache::remote
