// SPDX-License-Identifier: MIT
// runtime_header_pch.h - hipRTC's runtime header precompiled by hipRTC itself: which compiles a
// PCH may serve, its key, and the run that emits it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/pch/runtime_header_pch_file.h"
#include "support/failure.h"

namespace hipacm::backend {

/// Whether this process's hipRTC is one that a PCH is used with: ROCm 5's, inside
/// libamdhip64.so.5. ROCm 6.4's hipRTC loads a PCH and gives the same bytes, but one test run under
/// load saw a worker abort there ("LLVM ERROR: out of memory") that is not understood yet; 7.2's
/// does not load one from the working directory. Otherwise the failure says why not.
Expected<void> runtime_header_pch_supported();

/// Whether a compile with these hipRTC options may use a PCH: only options that set nothing but
/// front-end and code-generation flags (optimization level, macros, language standard, arch, math
/// and target switches), all of which the key carries. Paths (-I, -include), warnings (a header
/// parsed once reports its warnings once), debug info and anything unlisted keep the plain
/// compile. Otherwise the failure names the option.
Expected<void> runtime_header_pch_applies(const std::vector<std::string>& hiprtc_options);

/// The key of the PCH for `arch` and these hipRTC options: 64 hex digits of the SHA-256 of the
/// toolchain's fingerprint (the build IDs of hipRTC, which embeds the header, comgr and their
/// LLVM), the arch and every option in order. nullopt when the toolchain cannot be read.
std::optional<std::string> runtime_header_pch_key(const std::string& arch,
                                                  const std::vector<std::string>& hiprtc_options);

/// Has hipRTC precompile its runtime header for `request`'s arch and options and writes the PCH
/// to `out_path`. hipRTC's first step compiles an empty program with its own front-end options
/// and header, and -emit-pch makes that step's output the PCH (the later steps then fail, as
/// they must on a PCH). Only in a process whose comgr keeps its temporary files
/// (AMD_COMGR_SAVE_TEMPS=1) in `temp_dir` ($TMPDIR): the PCH is read from there. A failure when
/// hipRTC wrote no single plausible PCH.
Expected<void> emit_runtime_header_pch(const CompileRequest& request, const std::string& temp_dir,
                                       const std::string& out_path);

}  // namespace hipacm::backend
