// SPDX-License-Identifier: MIT
// external_inputs.h - the files on disk a compile may read beyond its request, folded into the key.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "hip_backend/compiler.h"

namespace hipacm::cache {

/// What a request reads from the file system besides the compiler's own
/// headers: files reached through include directories (-I, -isystem, -iquote,
/// -idirafter, --include-directory), absolute #include names and forced
/// includes (-include, -imacros).
struct ExternalInputs {
  /// False when the request reads files hipacm cannot account for (a
  /// computed `#include MACRO`, a response file, an option that names a
  /// plugin, PCH, bitcode or another compiler root) or the include graph
  /// exceeds the scan's bounds: such a request is compiled, never cached.
  bool cacheable = true;
  std::string why_not;  ///< one line for the log when !cacheable
  /// Hex SHA-256 over every candidate file the compiler could open for each
  /// include name: its path, whether it exists, and the contents of each one
  /// that does. Empty when the request names no file outside itself, so such
  /// requests keep their plain key.
  std::string digest;
  std::size_t files_read = 0;  ///< candidates that exist (for tests and logs)
  /// Every path the scan looked at, with stat's answer there (a regular file's identity:
  /// device, inode, size, mtime, ctime), for inputs_unchanged. Empty when the digest is.
  std::vector<std::pair<std::string, std::string>> observed;
  /// The precompiled headers (<forced include>.pch, .gch) the scan found absent.
  std::vector<std::string> absent_precompiled;
};

/// Limits of one scan: a request past them is not cached.
struct ExternalInputLimits {
  std::size_t max_files = 4096;
  std::size_t max_file_bytes = std::size_t{64} << 20;
  std::size_t max_total_bytes = std::size_t{256} << 20;
  std::size_t max_probes = 200000;
};

/// Scans the request's source, its in-memory headers and, transitively, every
/// file found on disk for include directives (`#include`, `#include_next`,
/// `#import`, `__has_include`), in every branch of every #if: an over-
/// approximation of what the compiler may read, so any change to a file it
/// could read, or a new file that could shadow one, changes the digest.
/// Relative directories resolve against the current directory, as the
/// compiler's do. Never throws.
ExternalInputs scan_external_inputs(const backend::CompileRequest& request,
                                    const ExternalInputLimits& limits = {}) noexcept;

/// True when every path `scanned` looked at still gives stat's answer it gave then (the same
/// regular file by identity, or still none), so a new scan of the same request would make the
/// same digest: what the cache checks after a compile without scanning again. False (a new scan
/// decides) on any difference. Never throws.
bool inputs_unchanged(const ExternalInputs& scanned) noexcept;

}  // namespace hipacm::cache
