// SPDX-License-Identifier: MIT
// intercept_library.h - where `hipacm run` (and doctor) finds libhipacm_intercept.so, and the
// LD_PRELOAD it sets.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hipacm::cli {

/// The file name of the LD_PRELOAD library that serves hipRTC calls through hipacm.
inline constexpr const char* kInterceptLibraryName = "libhipacm_intercept.so";

/// Where the library was looked for, in order, and the first place that has it.
struct InterceptLibrary {
  std::vector<std::string> searched;  ///< directories, without duplicates
  std::optional<std::string> path;    ///< absolute path of the library; nullopt: not found
};

/// Looks beside the libhipacm.so.1 this tool loaded (the build tree, and an install's libdir),
/// then in the tool's own directory and its ../LIBDIR: the library is built and installed with
/// libhipacm.so.1, so a tool always finds the one of its own build.
InterceptLibrary find_intercept_library();

/// `current` (LD_PRELOAD's value, possibly unset) with `library` first. A list that names
/// `library` already keeps its order, so a `hipacm run` inside another adds nothing.
std::string preload_with(const std::string& library, const std::optional<std::string>& current);

/// Why `path` cannot be put in LD_PRELOAD (the dynamic linker splits the list at spaces and
/// colons), or nullopt when it can.
std::optional<std::string> preload_path_problem(const std::string& path);

/// `value` quoted for a POSIX shell: inside single quotes, each ' written as '\''.
std::string shell_quoted(const std::string& value);

}  // namespace hipacm::cli
