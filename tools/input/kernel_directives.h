// SPDX-License-Identifier: MIT
// kernel_directives.h - the "// hipacm: key=value" lines at the top of an example .hip file.
#pragma once

#include <filesystem>
#include <string>

#include "tools/input/kernel_input.h"

namespace hipacm::cli {

/// Reads `file` into a KernelInput and applies the directives of its leading
/// // comment block (examples/kernels/README.md): option=, header= (a path
/// relative to the file's directory, included by its base name) and
/// name_expression=. Throws InputError for an unreadable file or header (see read_source_file), a
/// directive without '=' or with an empty value, or an unknown key.
KernelInput read_kernel_file(const std::filesystem::path& file);

}  // namespace hipacm::cli
