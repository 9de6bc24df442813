// SPDX-License-Identifier: MIT
// c_strings.h - arrays of C string pointers into std::strings, for the C APIs that take them.
#pragma once

#include <string>
#include <vector>

namespace hipacm {

/// One pointer per string, for APIs that take a count (hipRTC's and NVRTC's headers, names and
/// options). Valid while `strings` is alive and unchanged.
inline std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> pointers;
  pointers.reserve(strings.size());
  for (const std::string& text : strings) pointers.push_back(text.c_str());
  return pointers;
}

/// The NULL-terminated array that execve and posix_spawn take as argv or envp (`char* const[]`,
/// which they never write through). Valid while `strings` is alive and unchanged.
inline std::vector<char*> exec_strings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace hipacm
