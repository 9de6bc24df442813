// SPDX-License-Identifier: MIT
// json_output.h - writes a JSON document to a file or, for "-", to stdout.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hipacm::cli {

/// Pretty-printed, newline-terminated; bytes that are not UTF-8 become U+FFFD. Throws InputError
/// when `target` cannot be written.
void write_json(const nlohmann::ordered_json& document, const std::string& target);

}  // namespace hipacm::cli
