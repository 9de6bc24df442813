// SPDX-License-Identifier: MIT
// compiler_environment.cpp - the table of variables the compilers read, and their capture and use.
#include "hip_backend/compiler_environment.h"

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <set>

#include "support/environment.h"

namespace hipacm::backend {

const std::vector<CompilerVariable>& compiler_variables() {
  using U = CompilerVariableUse;
  // Read by clang's driver inside hipRTC (comgr) and by NVRTC's front end: include search lists
  // (CPATH and CPLUS_INCLUDE_PATH reach a hipRTC 5.2 compile), the installation and device
  // libraries the driver picks, the date macros, comgr's cache switch, and the variables through
  // which the driver or hipRTC append arguments of their own.
  static const std::vector<CompilerVariable> table = {
      {"CPATH", U::kIncludePath},
      {"CPLUS_INCLUDE_PATH", U::kIncludePath},
      {"C_INCLUDE_PATH", U::kIncludePath},
      {"OBJC_INCLUDE_PATH", U::kIncludePath},
      {"OBJCPLUS_INCLUDE_PATH", U::kIncludePath},
      {"ROCM_PATH", U::kKeyed},
      {"HIP_PATH", U::kKeyed},
      {"HIP_DEVICE_LIB_PATH", U::kKeyed},
      {"HIP_CLANG_PATH", U::kKeyed},
      {"SOURCE_DATE_EPOCH", U::kKeyed},
      // comgr 7.x's cache switch changes how it compiles (comgr_cache_policy.h): the logs, and
      // objects built with -g. Workers take the host's setting when they start.
      {"AMD_COMGR_CACHE", U::kKeyed},
      {"COMPILER_PATH", U::kOpaque},
      {"CCC_OVERRIDE_OPTIONS", U::kOpaque},
      {"HIPRTC_COMPILE_OPTIONS_APPEND", U::kOpaque},
      {"HIPCC_COMPILE_FLAGS_APPEND", U::kOpaque},
  };
  return table;
}

const CompilerVariable* find_compiler_variable(std::string_view name) {
  for (const CompilerVariable& variable : compiler_variables())
    if (variable.name == name) return &variable;
  return nullptr;
}

namespace {

/// `list` with each relative entry made absolute against `cwd`, and an empty one (the driver's
/// "working directory") replaced by `cwd`. Unchanged when `cwd` is unknown.
std::string anchored_path_list(std::string_view list, const std::string& cwd) {
  if (list.empty() || cwd.empty()) return std::string(list);
  std::string out;
  for (std::size_t at = 0; at <= list.size();) {
    std::size_t colon = list.find(':', at);
    if (colon == std::string_view::npos) colon = list.size();
    const std::string_view dir = list.substr(at, colon - at);
    if (at != 0) out += ':';
    if (dir.empty()) {
      out += cwd;
    } else if (dir.front() != '/') {
      out += cwd + "/" + std::string(dir);
    } else {
      out += dir;
    }
    at = colon + 1;
  }
  return out;
}

std::string working_directory() {
  std::string cwd(4096, '\0');
  if (::getcwd(cwd.data(), cwd.size()) == nullptr) return "";
  cwd.resize(std::char_traits<char>::length(cwd.c_str()));
  return cwd;
}

}  // namespace

std::vector<std::string> capture_compiler_environment() {
  std::vector<std::string> environment;
  environment.reserve(compiler_variables().size());
  std::string cwd;
  for (const CompilerVariable& variable : compiler_variables()) {
    std::string entry(variable.name);
    // As the compiler reads it, not as hipacm's settings are read: even in a privileged host.
    if (std::optional<std::string> value = compiler_visible_value(variable.name)) {
      std::string text = std::move(*value);
      // Workers compile in an empty directory of their own: a relative include directory means
      // what it meant here, in the host's working directory, as relative -I options do.
      if (variable.use == CompilerVariableUse::kIncludePath) {
        if (cwd.empty()) cwd = working_directory();
        text = anchored_path_list(text, cwd);
      }
      entry += "=" + text;
    }
    environment.push_back(std::move(entry));
  }
  return environment;
}

Expected<void> apply_compiler_environment(const std::vector<std::string>& environment) {
  std::set<std::string_view> seen;
  for (const std::string& entry : environment) {
    const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (find_compiler_variable(name) == nullptr || !seen.insert(name).second) {
      return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                     "the request's environment names '" + std::string(name) +
                         "', which is not a compiler variable or is named twice"};
    }
  }
  for (const std::string& entry : environment) {
    const std::size_t eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    if (eq == std::string::npos) {
      ::unsetenv(name.c_str());
    } else {
      ::setenv(name.c_str(), entry.c_str() + eq + 1, 1);
    }
  }
  return {};
}

}  // namespace hipacm::backend
