// SPDX-License-Identifier: MIT
// symbol_check.cpp - what the AMDGPU and NVIDIA code-object checks share, written once.
#include "hip_backend/codeobject/symbol_check.h"

#include <set>
#include <utility>

namespace hipacm::backend {

namespace {

constexpr std::uint8_t kSttObject = 1;
constexpr std::size_t kListedNames = 8;

}  // namespace

Failure check_failure(std::string message) {
  return Failure{HIPACM_ERROR_COMPILATION, std::move(message)};
}

Expected<CodeObjectInfo> read_object_for_machine(const std::vector<std::uint8_t>& code,
                                                 std::uint16_t machine,
                                                 const std::string& expected) {
  Expected<CodeObjectInfo> info = read_code_object(code.data(), code.size());
  if (!info) return check_failure("code object is unreadable: " + info.failure().message);
  if (info->machine != machine) {
    return check_failure("code object has e_machine " + std::to_string(info->machine) +
                         ", expected " + expected);
  }
  return info;
}

std::vector<std::string> missing_names(const std::vector<std::string>& expected,
                                       const std::function<bool(const std::string&)>& present) {
  std::vector<std::string> missing;
  std::set<std::string> reported;
  for (const std::string& name : expected) {
    if (present(name)) continue;
    if (reported.insert(name).second) missing.push_back(name);
  }
  return missing;
}

std::vector<std::string> missing_symbols(const CodeObjectInfo& info,
                                         const std::vector<std::string>& kernels,
                                         const std::vector<std::string>& expected) {
  std::set<std::string> present(kernels.begin(), kernels.end());
  for (const ElfSymbol& symbol : info.symbols) {
    if (symbol.type == kSttObject) present.insert(symbol.name);
  }
  return missing_names(expected, [&](const std::string& name) { return present.count(name) != 0; });
}

std::string join_names(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kListedNames; ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  if (names.size() > kListedNames) {
    out += ", ... (" + std::to_string(names.size() - kListedNames) + " more)";
  }
  return out;
}

}  // namespace hipacm::backend
