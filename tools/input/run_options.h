// SPDX-License-Identifier: MIT
// run_options.h - what warmup options give every kernel of a run: -I, -D, --option and --ext.
#pragma once

#include <string>
#include <vector>

namespace hipacm::cli {

/// The compiler options that `-I DIR`, `-D NAME[=VALUE]` and `--option OPT` give every kernel, in
/// that order (each kind in the order given). A DIR must be an existing directory and becomes
/// absolute, since compiles run in a directory of their own; a NAME must be an identifier; an
/// OPT must not be empty. Throws InputError.
std::vector<std::string> common_compiler_options(const std::vector<std::string>& include_dirs,
                                                 const std::vector<std::string>& defines,
                                                 const std::vector<std::string>& options);

/// `--ext` values (repeated, each comma-separated) as file name endings with their leading dot
/// (`cu` and `.cu` are both ".cu"), without repeats; {".hip"} when none are given. Throws
/// InputError for an empty item, one holding '/', or ".json" (the ending of manifests).
std::vector<std::string> kernel_extensions(const std::vector<std::string>& values);

}  // namespace hipacm::cli
