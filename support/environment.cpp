// SPDX-License-Identifier: MIT
// environment.cpp - the one way hipacm reads environment variables: secure_getenv, empty as unset.
#include "support/environment.h"

#include <sys/auxv.h>

#include <cstdlib>
#include <string_view>

extern char** environ;

namespace hipacm::backend {
namespace {

/// Whether `entry` ("NAME=value") sets the variable `name`.
bool environment_entry_is(std::string_view entry, std::string_view name) {
  return entry.size() > name.size() && entry.substr(0, name.size()) == name &&
         entry[name.size()] == '=';
}

}  // namespace

std::optional<std::string> environment_value(const char* name) {
  const char* value = secure_getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool privileged_process() { return getauxval(AT_SECURE) != 0; }

std::optional<std::string> compiler_visible_value(std::string_view name) {
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (environment_entry_is(text, name)) return std::string(text.substr(name.size() + 1));
  }
  return std::nullopt;
}

std::vector<std::string> worker_environment(const std::string& temp_dir) {
  const bool drop_hipacm = privileged_process();
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    if (environment_entry_is(text, "TMPDIR")) continue;
    if (drop_hipacm && text.starts_with("HIPACM_")) continue;
    out.emplace_back(text);
  }
  out.push_back("TMPDIR=" + temp_dir);
  return out;
}

}  // namespace hipacm::backend
