// SPDX-License-Identifier: MIT
// search_plan_options.cpp - the include directories and forced includes the options name.
#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "plugin/cache/key/path_options.h"
#include "plugin/cache/key/search_plan.h"

namespace hipacm::cache::input_scan {
namespace {

// The options that name include directories and forced includes (path_options.h).
constexpr const auto& kDirOptions = kIncludeDirOptions;
// Options through which the compiler reads files or arguments hipacm does not
// model: a request using one is compiled, never cached.
constexpr std::string_view kOpaqueOptions[] = {
    "@",
    "-include-pch",
    "-Xclang",
    "-Xpreprocessor",
    "-Xarch",
    "-Xoffload",
    "-Wp,",
    "-iprefix",
    "-iwithprefix",
    "-iwithsysroot",
    "-isysroot",
    "--sysroot",
    "-ivfsoverlay",
    "-iframework",
    "-F",
    "-fmodule",
    "-fprebuilt-module-path",
    "-fimplicit-module-maps",
    "-fplugin",
    "-fpass-plugin",
    "-load",
    "-B",
    "-resource-dir",
    "--gcc-toolchain",
    "--gcc-install-dir",
    "--rocm-path",
    "--hip-path",
    "--rocm-device-lib-path",
    "--hip-device-lib",
    "--cuda-path",
    "-mlink-builtin-bitcode",
    "-mlink-bitcode-file",
    "-fembed-offload-object",
    "-fprofile-use",
    "-fprofile-instr-use",
    "-fprofile-sample-use",
    "-fprofile-list",
    "-fsanitize-blacklist",
    "-fsanitize-ignorelist",
    "-fxray-always-instrument",
    "-fxray-never-instrument",
    "-fxray-attr-list",
    "--config",
    "--pch",
    "--use-pch",
    "--create-pch",
    "--instantiate-templates-in-pch",
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string absolute_dir(const std::string& dir) {
  if (!dir.empty() && dir.front() == '/') return dir;
  std::string cwd(4096, '\0');
  if (getcwd(cwd.data(), cwd.size()) == nullptr) return dir;
  cwd.resize(std::char_traits<char>::length(cwd.c_str()));
  return cwd + "/" + dir;
}

// An option value that names something on disk which no rule above accounts
// for (an unknown option with a path) makes the request uncacheable.
void check_unknown_value(std::string_view option, SearchPlan* plan) {
  std::string_view value = option;
  const std::size_t eq = option.find('=');
  if (eq != std::string_view::npos) value = option.substr(eq + 1);
  if (value.find('/') == std::string_view::npos) return;
  struct stat st {};
  if (::stat(std::string(value).c_str(), &st) == 0)
    not_cacheable(plan, "option '" + std::string(option) + "' names a path on disk");
}

}  // namespace

SearchPlan plan_search(const std::vector<std::string>& options) {
  SearchPlan plan;
  for (std::size_t i = 0; i < options.size(); ++i) {
    // The compiler sees surrounding whitespace as part of the option, so it
    // is kept: " -Ifoo" is not an include directory to it, nor to us.
    const std::string_view option = options[i];
    // Values of -D/-U are macro text, never read from disk.
    if (starts_with(option, "-D") || starts_with(option, "-U")) {
      if (option.size() == 2) ++i;
      continue;
    }
    bool handled = false;
    for (std::string_view opaque : kOpaqueOptions) {
      if (starts_with(option, opaque)) {
        not_cacheable(&plan, "option '" + std::string(option) +
                                 "' makes the compiler read input hipacm cannot account for");
        handled = true;
        break;
      }
    }
    if (handled) continue;
    const auto take_value = [&](std::string_view prefix, std::string* out) {
      if (!starts_with(option, prefix)) return false;
      std::string_view value = option.substr(prefix.size());
      if (!value.empty() && value.front() == '=') value.remove_prefix(1);
      if (value.empty()) {
        if (i + 1 >= options.size()) return true;  // the compiler rejects it
        value = options[++i];
      }
      *out = std::string(value);
      return true;
    };
    std::string value;
    for (std::string_view prefix : kDirOptions) {
      if (take_value(prefix, &value)) {
        if (!value.empty()) plan.dirs.push_back(absolute_dir(value));
        handled = true;
        break;
      }
    }
    if (handled) continue;
    for (std::string_view prefix : kForcedIncludeOptions) {
      if (take_value(prefix, &value)) {
        if (!value.empty()) plan.forced_includes.push_back(value);
        handled = true;
        break;
      }
    }
    if (!handled) check_unknown_value(option, &plan);
  }
  return plan;
}

}  // namespace hipacm::cache::input_scan
