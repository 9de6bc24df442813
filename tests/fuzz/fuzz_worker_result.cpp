// SPDX-License-Identifier: MIT
// fuzz_worker_result.cpp - fuzz target: the host decoding a worker's reply frame and checking its
// code.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hip_backend/codeobject/compile_result_check.h"
#include "hip_backend/protocol/worker_protocol.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using hipacm::backend::CompileResult;
namespace wire = hipacm::backend::wire;
using hipacm::fuzz::invariant_broken;

// The archs whose code-object checks a reply can reach.
constexpr const char* kArchs[] = {"gfx90a", "gfx1030:xnack-", "sm_80", "compute_80"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto decoded = wire::decode_result_frame(data, size);
  if (!decoded) {
    if (decoded.failure().message.empty())
      invariant_broken("a result frame was refused without a reason");
    return 0;
  }
  const CompileResult& result = decoded->message;
  const auto again = wire::encode_result_frame(decoded->request_id, result);
  if (!again)
    invariant_broken("an accepted result cannot be encoded again: " + again.failure().message);
  if (again.value() != std::vector<std::uint8_t>(data, data + size))
    invariant_broken("an accepted result frame is not what the encoder writes for it");
  if (result.status < HIPACM_SUCCESS || result.status > HIPACM_ERROR_INTERNAL)
    invariant_broken("a result frame was accepted with an unknown status");
  // A reply that claims success is only a claim: the host checks it against
  // the request it sent, as WorkerCompiler does, with as many name
  // expressions as the reply has lowered names (so that the deeper checks
  // run) and with one.
  if (result.status == HIPACM_SUCCESS) {
    for (const char* arch : kArchs) {
      hipacm::backend::CompileRequest request;
      request.source = "extern \"C\" __global__ void add_one(float* x) { x[0] += 1; }\n";
      request.source_name = "tiny.hip";
      request.arch = arch;
      for (std::size_t count : {result.lowered_names.size(), std::size_t{1}}) {
        request.name_expressions.assign(count, "scale<float>");
        if (const auto answers =
                hipacm::backend::check_compile_result(request, result.code, result.lowered_names);
            !answers && answers.failure().message.empty())
          invariant_broken("a worker's result was refused without a reason");
      }
    }
  }
  return 0;
}
