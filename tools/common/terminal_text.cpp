// SPDX-License-Identifier: MIT
// terminal_text.cpp - escapes control characters, invalid UTF-8 and bidi controls for printing.
#include "tools/common/terminal_text.h"

#include <fmt/core.h>

#include <cstdint>

namespace hipacm::cli {
namespace {

// The length of the valid UTF-8 sequence at the start of `text` and its code point, or 0.
std::size_t utf8_sequence(std::string_view text, char32_t* code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const std::uint8_t lead = byte(0);
  std::size_t length = 0;
  char32_t value = 0, min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1Fu, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0Fu, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0u) != 0x80u) return 0;
    value = (value << 6) | (byte(i) & 0x3Fu);
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8.
  if (value < min || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) return 0;
  *code_point = value;
  return length;
}

bool hides_text(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) ||      // C1 controls (CSI is U+009B)
         (c >= 0x202A && c <= 0x202E) ||  // bidi embeddings and overrides
         (c >= 0x2066 && c <= 0x2069);    // bidi isolates
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c == '\t') {
      out += '\t';
      ++i;
    } else if (c < 0x80) {
      switch (c) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case 0x1B:
          out += "\\e";
          break;
        default:
          out += fmt::format("\\x{:02x}", c);
      }
      ++i;
    } else {
      char32_t code_point = 0;
      const std::size_t length = utf8_sequence(text.substr(i), &code_point);
      if (length == 0) {
        out += fmt::format("\\x{:02x}", c);
        ++i;
      } else if (hides_text(code_point)) {
        out += fmt::format("\\u{{{:04X}}}", static_cast<std::uint32_t>(code_point));
        i += length;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
    }
  }
  return out;
}

}  // namespace hipacm::cli
