// SPDX-License-Identifier: MIT
// bounded_json.h - parsing JSON text the CLI is given, refusing deep nesting before it is built.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hipacm::cli {

/// Nesting deeper than this is refused before it is built: real manifests nest four levels.
inline constexpr int kMaxManifestDepth = 64;

/// Parses `text`, refusing objects and arrays nested deeper than kMaxManifestDepth while parsing:
/// building, walking, printing or destroying a value 50,000 levels deep costs stack at every level.
/// Throws InputError "<label>: nested deeper than ..." or "<label>: <not_what>: <parser's
/// reason>", and nothing else.
nlohmann::json parse_bounded_json(std::string_view text, const std::string& label,
                                  const char* not_what);

}  // namespace hipacm::cli
