// SPDX-License-Identifier: MIT
// intercept_library.cpp - finds libhipacm_intercept.so beside this build's libhipacm.so.1 and
// composes the LD_PRELOAD value that puts it first.
#include "tools/common/intercept_library.h"

#include <dlfcn.h>
#include <hipacm/hipacm.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace hipacm::cli {
namespace {

namespace fs = std::filesystem;

// The directory of the libhipacm.so.1 this process runs, as the dynamic linker found it.
std::optional<fs::path> plugin_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&hipacm_get_provider), &info) == 0 ||
      info.dli_fname == nullptr)
    return std::nullopt;
  std::error_code ec;
  const fs::path file = fs::canonical(info.dli_fname, ec);
  if (ec) return std::nullopt;
  return file.parent_path();
}

std::optional<fs::path> tool_directory() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return exe.parent_path();
}

std::vector<std::string> split_preload(std::string_view list) {
  std::vector<std::string> entries;
  std::string entry;
  for (const char c : list) {
    if (c == ':' || c == ' ') {
      if (!entry.empty()) entries.push_back(entry);
      entry.clear();
    } else {
      entry += c;
    }
  }
  if (!entry.empty()) entries.push_back(entry);
  return entries;
}

}  // namespace

InterceptLibrary find_intercept_library() {
  std::vector<fs::path> candidates;
  if (const auto dir = plugin_directory()) candidates.push_back(*dir);
  if (const auto dir = tool_directory()) {
    candidates.push_back(*dir);
    candidates.push_back((*dir / ".." / HIPACM_INSTALL_LIBDIR).lexically_normal());
  }
  InterceptLibrary found;
  for (const fs::path& dir : candidates) {
    const std::string text = dir.string();
    if (std::find(found.searched.begin(), found.searched.end(), text) != found.searched.end())
      continue;
    found.searched.push_back(text);
    const fs::path library = dir / kInterceptLibraryName;
    // The dynamic linker only needs to read it; a directory or a dangling link is not it.
    std::error_code ec;
    if (!found.path && fs::is_regular_file(library, ec) && access(library.c_str(), R_OK) == 0)
      found.path = library.string();
  }
  return found;
}

std::string preload_with(const std::string& library, const std::optional<std::string>& current) {
  if (!current || current->empty()) return library;
  for (const std::string& entry : split_preload(*current))
    if (entry == library) return *current;
  return library + ":" + *current;
}

std::optional<std::string> preload_path_problem(const std::string& path) {
  if (path.find_first_of(": \t\n") != std::string::npos)
    return "its path has a colon or a space, where LD_PRELOAD splits its list";
  return std::nullopt;
}

std::string shell_quoted(const std::string& value) {
  std::string quoted = "'";
  for (const char c : value) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

}  // namespace hipacm::cli
