// SPDX-License-Identifier: MIT
// name_list.h - the newline-joined text form of a name list inside the cache database.
#pragma once

#include <string>
#include <vector>

namespace hipacm::cache {

/// Symbol names never contain '\n' (callers refuse to cache ones that do).
std::string join_names(const std::vector<std::string>& names);
std::vector<std::string> split_names(const std::string& joined);
/// True when every name can round-trip through join_names/split_names.
bool names_joinable(const std::vector<std::string>& names);

}  // namespace hipacm::cache
