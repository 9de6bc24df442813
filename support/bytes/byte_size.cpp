// SPDX-License-Identifier: MIT
// byte_size.cpp - byte counts as people write them and as they read them.
#include "support/bytes/byte_size.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <limits>

namespace hipacm {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kMaxDigits = 18;  // 10^18 < INT64_MAX: no overflow while reading
// A millionth of a TiB is about a MiB; below 10^6 the fraction times 1024^4 stays below 2^60.
constexpr std::size_t kMaxFractionDigits = 6;

struct Split {
  std::string_view whole, fraction, unit;
};

Split split(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  Split parts{text.substr(0, i), {}, {}};
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    parts.fraction = text.substr(start, i - start);
    if (parts.fraction.empty()) parts.fraction = text.substr(start - 1, 1);  // "5." is malformed
  }
  parts.unit = text.substr(i);
  return parts;
}

bool equals_folded(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

// The power of 1024 a unit names: 0 for "" and "B", nullopt for anything but K/M/G/T[iB].
std::optional<int> unit_power(std::string_view unit) {
  if (unit.empty() || equals_folded(unit, "b")) return 0;
  static constexpr std::string_view kLetters = "kmgt";
  const char letter = static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0])));
  const std::size_t at = kLetters.find(letter);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view rest = unit.substr(1);
  if (!rest.empty() && !equals_folded(rest, "ib")) return std::nullopt;
  return static_cast<int>(at) + 1;
}

bool is_si_unit(std::string_view unit) {
  return unit.size() == 2 &&
         std::string_view("kmgt").find(static_cast<char>(
             std::tolower(static_cast<unsigned char>(unit[0])))) != std::string_view::npos &&
         (unit[1] == 'B' || unit[1] == 'b');
}

}  // namespace

std::optional<std::int64_t> parse_byte_size(std::string_view text) {
  const Split parts = split(text);
  if (parts.whole.empty() || parts.whole.size() + parts.fraction.size() > kMaxDigits ||
      parts.fraction.size() > kMaxFractionDigits)
    return std::nullopt;
  const std::optional<int> power = unit_power(parts.unit);
  if (!power || (*power == 0 && !parts.fraction.empty())) return std::nullopt;
  std::int64_t whole = 0;
  for (char c : parts.whole) whole = whole * 10 + (c - '0');
  std::int64_t fraction = 0, scale = 1;
  for (char c : parts.fraction) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    fraction = fraction * 10 + (c - '0');
    scale *= 10;
  }
  std::int64_t multiplier = 1;
  for (int i = 0; i < *power; ++i) multiplier *= 1024;
  if (whole > kMax / multiplier) return std::nullopt;
  const std::int64_t part = fraction * multiplier / scale;
  if (whole * multiplier > kMax - part) return std::nullopt;
  return whole * multiplier + part;
}

std::string byte_size_problem(std::string_view text) {
  const std::string shown(text.substr(0, 64));
  if (is_si_unit(split(text).unit))
    return "'" + shown + "' is ambiguous: write " + std::string(1, text[text.size() - 2]) + " or " +
           std::string(1, text[text.size() - 2]) +
           "iB for powers of 1024 (e.g. 5G = " + "5GiB = 5368709120 bytes)";
  return "'" + shown +
         "' is not a byte count: a whole number of bytes, or a number with K, M, G or T "
         "(powers of 1024, up to 6 decimals), e.g. 1073741824, 512M, 1.5G, 100KiB";
}

std::string human_bytes(std::int64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while ((value >= 1024.0 || value <= -1024.0) && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace hipacm
