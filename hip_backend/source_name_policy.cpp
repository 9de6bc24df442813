// SPDX-License-Identifier: MIT
// source_name_policy.cpp - which source and header names may reach the compiler's file system.
#include "hip_backend/source_name_policy.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace hipacm::backend {
namespace {

bool allowed_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == '+' || c == '@' || c == '/';
}

Failure refuse(std::string message) {
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(message)};
}

// Built by appends: GCC 12 at -O3 reports a false -Wrestrict inside `"'" + std::string(...)`.
std::string quoted(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out.push_back('\'');
  out.append(name);
  out.push_back('\'');
  return out;
}

}  // namespace

Expected<void> source_name_allowed(std::string_view name) {
  if (name.empty()) return refuse("is empty");
  if (name.size() > kMaxSourceNameBytes) {
    return refuse("is " + std::to_string(name.size()) + " bytes long; the limit is " +
                  std::to_string(kMaxSourceNameBytes));
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (allowed_byte(name[i])) continue;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(name[i]));
    return refuse(std::string("holds byte ") + byte + " at offset " + std::to_string(i) +
                  "; names may use only letters, digits and _ - . + @ /");
  }
  if (name.front() == '/') {
    return refuse(quoted(name) + " is absolute; names must be relative paths");
  }
  if (name.back() == '/') return refuse(quoted(name) + " ends with '/'; it names no file");
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    const std::string_view component = name.substr(start, slash - start);
    if (component.empty()) return refuse(quoted(name) + " has an empty path component");
    if (component == "." || component == "..") {
      return refuse(quoted(name) + " has a '" + std::string(component) +
                    "' component; names must stay inside the compiler's include "
                    "directory");
    }
    if (component.size() > kMaxSourceNameComponentBytes) {
      return refuse("has a path component of " + std::to_string(component.size()) +
                    " bytes; the limit is " + std::to_string(kMaxSourceNameComponentBytes));
    }
    start = slash + 1;
  }
  return {};
}

Expected<void> request_names_allowed(const CompileRequest& request) {
  if (const Expected<void> allowed = source_name_allowed(request.source_name); !allowed) {
    return refuse("source_name " + allowed.failure().message);
  }
  for (std::size_t i = 0; i < request.headers.size(); ++i) {
    if (const Expected<void> allowed = source_name_allowed(request.headers[i].first); !allowed) {
      return refuse("header_names[" + std::to_string(i) + "] " + allowed.failure().message);
    }
  }
  return {};
}

}  // namespace hipacm::backend
