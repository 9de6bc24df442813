// SPDX-License-Identifier: MIT
// terminal_text.h - makes text from files, caches and compiler logs safe to print on a terminal.
#pragma once

#include <string>
#include <string_view>

namespace hipacm::cli {

/// `text` with every byte that could steer a terminal or hide what is shown
/// written as an escape: C0 controls (but tab) as \n, \r, \e or \xNN, DEL and
/// C1 controls, bytes that are not valid UTF-8 (\xNN each), and the bidi
/// overrides and isolates (U+202A..U+202E, U+2066..U+2069, as \u{NNNN}). A
/// backslash stays a backslash. Everything the CLI prints that it did not
/// write itself (paths, names and keys from a cache, log lines, messages that
/// quote them) goes through this.
std::string printable(std::string_view text);

}  // namespace hipacm::cli
