// SPDX-License-Identifier: MIT
// output_files.h - writes the tool's output files (reports, code objects) so that nothing another
// user created first, at the file or around it, receives or later replaces them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hipacm::cli {

/// Throws InputError unless `dir` is a directory (not a link to one) that this user or root owns
/// and that others cannot write, except with the sticky bit (/tmp): in a directory another user
/// owns or may write, they could swap an output for their own after it is written.
void check_output_directory(const std::string& dir);

/// Writes `bytes` to `path` (created 0644 less the umask, or cut to nothing first): never
/// through a link, never into a FIFO, and never into a file another user owns. The directory is
/// checked with check_output_directory(). Throws InputError naming the path and the reason.
void write_output_file(const std::string& path, std::string_view bytes);

}  // namespace hipacm::cli
