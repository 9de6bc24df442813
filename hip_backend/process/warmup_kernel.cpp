// SPDX-License-Identifier: MIT
// warmup_kernel.cpp - the trivial compile that loads and initializes a compiler before real work.
#include "hip_backend/process/warmup_kernel.h"

namespace hipacm::backend {

CompileRequest warmup_request(const std::string& arch) {
  CompileRequest request;
  request.source = "extern \"C\" __global__ void hipacm_warmup(float* x) { x[0] = 1.0f; }\n";
  request.source_name = "hipacm_warmup.hip";
  request.arch = arch;
  return request;
}

}  // namespace hipacm::backend
