// SPDX-License-Identifier: MIT
// option_checks.cpp - strict parsing of --timeout, --arch and byte counts, and the non-empty check.
#include "tools/common/option_checks.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "support/bytes/byte_size.h"
#include "tools/common/exit_codes.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {

CLI::Validator non_empty_value() {
  return CLI::Validator(
      [](const std::string& value) {
        return value.empty() ? std::string("must not be empty") : std::string();
      },
      "NONEMPTY");
}

std::uint32_t timeout_ms_from_seconds(const std::string& text) {
  double seconds = 0;
  const char* end = text.data() + text.size();
  // from_chars with the fixed format reads no "nan", "inf", hex or exponents.
  const auto [stop, ec] = std::from_chars(text.data(), end, seconds, std::chars_format::fixed);
  if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(seconds) || seconds < 0 ||
      seconds > kMaxTimeoutSeconds)
    throw InputError(
        fmt::format("--timeout: '{}' is not a number of seconds from 0 to {:.0f} (0 = no limit)",
                    printable(text), kMaxTimeoutSeconds));
  if (seconds == 0) return 0;
  return static_cast<std::uint32_t>(std::max(1.0, std::round(seconds * 1000)));
}

std::int64_t byte_size_option(const std::string& option, const std::string& text) {
  if (const std::optional<std::int64_t> bytes = parse_byte_size(text)) return *bytes;
  throw InputError(fmt::format("{}: {}", option, printable(byte_size_problem(text))));
}

std::vector<std::string> split_archs(const std::vector<std::string>& values) {
  std::vector<std::string> archs;
  for (const std::string& value : values) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = value.find(',', start);
      const std::string arch =
          value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (arch.empty())
        throw InputError(fmt::format("--arch: empty arch name in '{}' (e.g. --arch gfx90a,gfx1030)",
                                     printable(value)));
      if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return archs;
}

}  // namespace hipacm::cli
