// SPDX-License-Identifier: MIT
// runtime_header_pch_compile.h - a worker's compile, with hipRTC's runtime header precompiled
// where that is proven to change nothing, and the helper process that emits the PCH.
#pragma once

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// compile_for_target(request), faster where it can be and never different.
///
/// hipRTC parses its 360 KB runtime header again in every compile: about 85 % of a small
/// kernel's time on ROCm 5.2. For a gfx arch whose options a PCH may serve
/// (runtime_header_pch_applies), the compile runs with the working directory in the store's
/// directory for its key, where clang's driver loads the PCH in place of that parse. Keys cover
/// the toolchain, the arch and every option, so a PCH serves only the compiles it was built for.
/// The rules:
///  - the first process to need a key first checks that this hipRTC loads a PCH from the
///    working directory at all (a decoy file must make its kernel fail; some releases' comgr
///    runs the driver elsewhere, and the key is refused there). It then has hipRTC itself emit
///    the PCH (in a helper process, see run_runtime_header_pch_helper), compiles its kernel both
///    ways, and publishes the PCH only when the code, the lowered names and the log are byte for
///    byte the same; otherwise the key is refused for good. It returns the plain result either
///    way;
///  - a compile that fails with a PCH is compiled again without one; when that passes, the PCH
///    is removed and the plain result returned. So a PCH never turns a valid program away;
///  - everything else (another arch, another option, HIPACM_HIPRTC_PCH=off, a store that cannot
///    be used, a PCH being built elsewhere) is the plain compile.
/// Only for single-threaded worker processes: it changes the process's working directory for
/// the length of one compile. Never throws.
CompileResult compile_in_worker(const CompileRequest& request);

/// The helper's command line: `hipacm-worker --emit-header-pch DIR ARCH [OPTION...]`.
inline constexpr const char* kEmitHeaderPchFlag = "--emit-header-pch";

/// The helper process: has hipRTC emit the PCH for ARCH and the OPTIONs into
/// DIR/hiprtc_runtime.h.pch, with comgr keeping its files in DIR/tmp. Its own process because
/// comgr reads AMD_COMGR_SAVE_TEMPS once, at its first use. Returns the exit code: 0 when the
/// PCH was written.
int run_runtime_header_pch_helper(int argc, char** argv);

}  // namespace hipacm::backend
