// SPDX-License-Identifier: MIT
// name_list.cpp - the newline-joined text form of a name list inside the cache database.
#include "plugin/cache/store/name_list.h"

namespace hipacm::cache {

// Each name is followed by '\n', so an empty list and a list holding one
// empty name differ ("" vs "\n").
std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    out += name;
    out += '\n';
  }
  return out;
}

std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < joined.size(); ++i) {
    if (joined[i] != '\n') continue;
    out.push_back(joined.substr(start, i - start));
    start = i + 1;
  }
  return out;
}

bool names_joinable(const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (name.find('\n') != std::string::npos) return false;
  return true;
}

}  // namespace hipacm::cache
