// SPDX-License-Identifier: MIT
// compile_dispatch.cpp - the in-process compile step for any arch: NVRTC or hipRTC by prefix.
#include "hip_backend/dispatch/compile_dispatch.h"

#include "hip_backend/hiprtc/inprocess_compiler.h"
#include "hip_backend/nvrtc/nvrtc_compiler.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

CompileResult compile_for_target(const CompileRequest& request) {
  if (is_nvidia_arch(request.arch)) return compile_with_nvrtc(request);
  return compile_with_hiprtc(request);
}

CompileResult InProcessCompiler::compile(const CompileRequest& request) {
  return compile_for_target(request);
}

}  // namespace hipacm::backend
