// SPDX-License-Identifier: MIT
// option_checks.h - checks of option values that CLI11 alone would let through (empty, nan, ",").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hipacm::cli {

/// The longest accepted --timeout: one week.
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600.0;

/// A CLI11 check that refuses an empty value: `--cache-dir ''` must not
/// quietly mean "the default".
CLI::Validator non_empty_value();

/// `command`'s option `name`, bound to `value` and checked with non_empty_value().
template <class T>
CLI::Option* add_non_empty_option(CLI::App* command, const std::string& name, T& value,
                                  const std::string& help) {
  return command->add_option(name, value, help)->check(non_empty_value());
}

/// --timeout SECONDS as milliseconds: a finite decimal number from 0 to
/// kMaxTimeoutSeconds, 0 meaning no limit. A positive value never rounds
/// down to 0. Throws InputError for nan, inf, negatives and anything else.
std::uint32_t timeout_ms_from_seconds(const std::string& text);

/// A byte-count option's value: bytes, or a number with K, M, G or T (powers of 1024), as
/// parse_byte_size (support/bytes/byte_size.h) reads it. Throws InputError naming `option` and
/// saying what is accepted for anything else.
std::int64_t byte_size_option(const std::string& option, const std::string& text);

/// --arch values (repeated, each comma-separated) as one list in order,
/// without repeats. Throws InputError for an empty item (`,`, `a,,b`).
std::vector<std::string> split_archs(const std::vector<std::string>& values);

}  // namespace hipacm::cli
