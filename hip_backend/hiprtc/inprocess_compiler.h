// inprocess_compiler.h - compiles in this process: hipRTC serialized by one lock, NVRTC in
// parallel.
#pragma once

#include "hip_backend/compiler.h"

namespace hipacm::backend {

/// Compiles in the calling process: NVIDIA archs with NVRTC, AMD archs with
/// the dlopen'd hipRTC. hipRTC 5.2.3 is
/// not thread-safe (overlapping compiles abort the process, and first use
/// races), so every instance shares one process-wide lock and a once-only
/// initialization. Checks the code object before reporting success.
class InProcessCompiler final : public Compiler {
 public:
  CompileResult compile(const CompileRequest& request) override;
};

/// The same compile, as a free function.
CompileResult compile_with_hiprtc(const CompileRequest& request);

/// The in-process compile step for any arch: NVRTC for sm_/compute_ archs
/// (no lock), hipRTC under its lock otherwise. What a worker process runs.
CompileResult compile_for_target(const CompileRequest& request);

}  // namespace hipacm::backend
