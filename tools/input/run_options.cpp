// SPDX-License-Identifier: MIT
// run_options.cpp - checks and expands the run-wide warmup options (-I, -D, --option, --ext).
#include "tools/input/run_options.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "tools/common/exit_codes.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::vector<std::string> common_compiler_options(const std::vector<std::string>& include_dirs,
                                                 const std::vector<std::string>& defines,
                                                 const std::vector<std::string>& options) {
  std::vector<std::string> out;
  for (const std::string& dir : include_dirs) {
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec))
      throw InputError(fmt::format("-I '{}': not a directory", dir));
    const fs::path absolute = fs::absolute(dir, ec);
    if (ec) throw InputError(fmt::format("-I '{}': {}", dir, ec.message()));
    out.push_back("-I" + absolute.lexically_normal().string());
  }
  for (const std::string& define : defines) {
    const std::string name = define.substr(0, define.find('='));
    if (!is_identifier(name))
      throw InputError(fmt::format("-D '{}': want NAME or NAME=VALUE, NAME an identifier", define));
    out.push_back("-D" + define);
  }
  for (const std::string& option : options) {
    if (option.empty()) throw InputError("--option: an empty option");
    out.push_back(option);
  }
  return out;
}

std::vector<std::string> kernel_extensions(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    std::istringstream items(value + ",");
    for (std::string item; std::getline(items, item, ',');) {
      if (item.empty() || item == ".")
        throw InputError(fmt::format("--ext '{}': an empty item", value));
      // Not item.insert(0, "."): GCC 12 at -O3 reports a false -Wrestrict there (GCC PR 105329).
      if (item.front() != '.') item = "." + item;
      if (item.find('/') != std::string::npos)
        throw InputError(fmt::format("--ext '{}': a file name ending cannot hold '/'", item));
      if (item == ".json")
        throw InputError("--ext .json: .json files are manifests, not kernel files");
      if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    }
  }
  if (out.empty()) out.push_back(".hip");
  return out;
}

}  // namespace hipacm::cli
