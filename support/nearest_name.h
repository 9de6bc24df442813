// SPDX-License-Identifier: MIT
// nearest_name.h - "did you mean ...?": the known names closest to a mistyped one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hipacm {

/// Longer names are never compared: a hostile string gets no suggestion and costs nothing.
inline constexpr std::size_t kMaxNameLength = 64;

/// Edit distance between `a` and `b` where inserting, deleting or replacing a character, or
/// swapping two neighbours ("gfx9a0" for "gfx90a"), costs 1 (optimal string alignment).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The names in `known` closest to `typed` when they are close enough to be a likely typo: at
/// most 1 edit for names up to 4 characters, 2 up to 8 and 3 beyond, and fewer edits than
/// `typed` is long. Of several at the same distance, those that hold the same characters as
/// `typed` (a swap) win; the rest are all returned, in `known`'s order, at most `limit`. Empty
/// for an exact match (nothing to suggest), an empty or too long `typed`, or nothing close.
std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& known,
                                       std::size_t limit = 8);

/// "a", "a or b", "a, b or c"; each name wrapped in `quote`.
std::string one_of(const std::vector<std::string>& names, std::string_view quote = "");

}  // namespace hipacm
