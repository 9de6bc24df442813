// SPDX-License-Identifier: MIT
// compile_dispatch.cpp - the in-process compile step for any arch: NVRTC or hipRTC by prefix.
#include "hip_backend/dispatch/compile_dispatch.h"

#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/nvrtc/nvrtc_compiler.h"
#include "hip_backend/target_arch.h"
#include "support/stats.h"

namespace hipacm::backend {

CompileResult compile_for_target(const CompileRequest& request) {
  if (is_nvidia_arch(request.arch)) return compile_with_nvrtc(request);
  return compile_with_hiprtc(request);
}

// Counted here and not in compile_for_target, which a worker runs too: a worker's compile is
// counted once, by the host's WorkerCompiler.
CompileResult InProcessCompiler::compile(const CompileRequest& request) {
  count_compile_started();
  CompileResult result = compile_for_target(request);
  count_compile_ended(result.status);
  return result;
}

}  // namespace hipacm::backend
