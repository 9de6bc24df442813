// SPDX-License-Identifier: MIT
// enum_words.h - a table of the words that name an enum's values, read both ways: a word to its
// value (parsing a setting) and a value to its word (messages, log prefixes, written settings).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hipacm {

/// One row of a word table. A value may have several words (the first names it); a value with no
/// row takes the caller's fallback word.
template <class E>
struct EnumWord {
  E value;
  const char* word;
};

/// The value that `word` names in `table`, if any row does.
template <class E, std::size_t N>
constexpr std::optional<E> value_of_word(const EnumWord<E> (&table)[N], std::string_view word) {
  for (const EnumWord<E>& row : table)
    if (word == row.word) return row.value;
  return std::nullopt;
}

/// The first word of `value` in `table`, or `otherwise` when it has none.
template <class E, std::size_t N>
constexpr const char* word_of_value(const EnumWord<E> (&table)[N], E value, const char* otherwise) {
  for (const EnumWord<E>& row : table)
    if (row.value == value) return row.word;
  return otherwise;
}

}  // namespace hipacm
