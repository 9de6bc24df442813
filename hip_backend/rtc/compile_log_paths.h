// SPDX-License-Identifier: MIT
// compile_log_paths.h - puts the request's own file names back into a compiler log in place of
// comgr's temporary paths.
#pragma once

#include <string>
#include <string_view>

namespace hipacm::backend {

/// `log` with comgr's temporary file paths replaced by the names the request gave them: the main
/// source, which ROCm 5's comgr writes to `<dir>/comgr-XXXXXX/input/CompileSource`, becomes
/// `source_name`; newer comgr's `<dir>/comgr-XXXXXX/input/NAME` becomes NAME, and a virtual header
/// at `<dir>/comgr-XXXXXX/include/NAME` becomes NAME, the name it is included by. (ROCm 7 names
/// the directory comgr-PID-N-XXXXXX.) Only an absolute path of exactly that shape is rewritten;
/// every other byte (other paths, NVRTC's logs, which already name the source) is kept as it is.
std::string with_request_file_names(std::string_view log, std::string_view source_name);

}  // namespace hipacm::backend
