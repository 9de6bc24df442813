// SPDX-License-Identifier: MIT
// compile_log_paths.h - comgr's temporary source and header paths in a compiler log, both ways:
// the request's own names in their place, and back again as a program's own comgr writes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hipacm::backend {

/// `log` with comgr's temporary file paths replaced by the names the request gave them: the main
/// source, which ROCm 5's comgr writes to `<dir>/comgr-XXXXXX/input/CompileSource`, becomes
/// `source_name`; newer comgr's `<dir>/comgr-XXXXXX/input/NAME` becomes NAME, and a virtual header
/// at `<dir>/comgr-XXXXXX/include/NAME` becomes NAME, the name it is included by. (ROCm 7 names
/// the directory comgr-PID-N-XXXXXX.) Only an absolute path of exactly that shape is rewritten;
/// every other byte (other paths, NVRTC's logs, which already name the source) is kept as it is.
std::string with_request_file_names(std::string_view log, std::string_view source_name);

/// How a hipRTC's comgr names the files of one compile.
enum class ComgrShape {
  kRocm5,  ///< <tmp>/comgr-XXXXXX/input/CompileSource, <tmp>/comgr-XXXXXX/include/NAME
  kRocm6,  ///< <tmp>/comgr-XXXXXX/input/SOURCE_NAME, <tmp>/comgr-XXXXXX/include/NAME
  kRocm7,  ///< as ROCm 6 in <tmp>/comgr-PID-N-XXXXXX
};

/// The shape of a hipRTC by its ROCm release ("ROCm 5.2", "6.4.1", "7.2"; rocm_release_of()'s
/// answer); false when the major release is none of these (the log is then left as it is).
bool comgr_shape_of_release(std::string_view release, ComgrShape* shape);

/// The directory comgr makes for one compile in this process: the temporary directory LLVM picks
/// (TMPDIR, TMP, TEMP, TEMPDIR, else /tmp), then comgr-XXXXXX (ROCm 7: comgr-PID-N-XXXXXX, with
/// this process's id and `counter`), XXXXXX six fresh random hex digits as LLVM draws them.
std::string program_comgr_directory(ComgrShape shape, unsigned counter);

/// The inverse of with_request_file_names: `log` with `source_name` and each of `header_names`
/// put back as comgr's paths under `comgr_directory` (one directory for the whole log, as comgr
/// has) wherever the forward rewrite leaves a name in a file position: where a path may start (as
/// with_request_file_names reads it) and followed by ":LINE" (a diagnostic's "NAME:3:7:", "In
/// file included from NAME:2:"). The source goes back under input/ (ROCm 5: as CompileSource), a
/// header under include/; an empty name is never put back. A name printed elsewhere (in a message,
/// quoted, in a source line) stays as it is.
std::string with_comgr_file_names(std::string_view log, std::string_view source_name,
                                  const std::vector<std::string>& header_names,
                                  std::string_view comgr_directory, ComgrShape shape);

}  // namespace hipacm::backend
