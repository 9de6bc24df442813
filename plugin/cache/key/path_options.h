// SPDX-License-Identifier: MIT
// path_options.h - which compile options name files or directories, and the one rewrite that
// anchors their relative paths at the host's working directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/failure.h"

namespace hipacm::cache {

/// Options that add an include directory; the value is joined, after '=', or the next option.
/// Longer spellings come before their prefixes. (--include-path is NVRTC's spelling.)
inline constexpr std::string_view kIncludeDirOptions[] = {"--include-directory-after",
                                                          "--include-directory",
                                                          "--include-path",
                                                          "-isystem-after",
                                                          "-cxx-isystem",
                                                          "-idirafter",
                                                          "-isystem",
                                                          "-iquote",
                                                          "-I"};

/// Options that include a file before the source (--pre-include is NVRTC's spelling). The
/// compiler looks for a relative name in its working directory first, then along the include
/// path.
inline constexpr std::string_view kForcedIncludeOptions[] = {"--pre-include", "--include",
                                                             "-include", "--imacros", "-imacros"};

/// Rewrites, in place, every relative path that an option of `options` names so that it is
/// absolute against this process's working directory, exactly as the compiler would have
/// resolved it there: include directories, other files and directories the compiler reads or
/// writes (-include-pch, -fsanitize-ignorelist=, -fprofile-use=, -B, @file, ...), and a forced
/// include (-include, -imacros) whose name exists in the working directory (one that does not
/// is left to the include path). An option that names nothing relative is left byte for byte as
/// it was, so such requests keep their keys. Values passed on to another tool (-Xclang, -mllvm,
/// ...) and macro text (-D, -U) are not touched. Succeeds when nothing needed the working
/// directory or it could be read; an INVALID_ARGUMENT failure says why when a relative path
/// needs it and it cannot be read (a deleted directory): the compile could not mean what it meant.
Expected<void> anchor_relative_paths(std::vector<std::string>* options);

}  // namespace hipacm::cache
