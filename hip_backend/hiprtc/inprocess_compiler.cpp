// SPDX-License-Identifier: MIT
// inprocess_compiler.cpp - one hipRTC compile under the process-wide lock, checked before success.
#include "hip_backend/hiprtc/inprocess_compiler.h"

#include <atomic>

#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/hiprtc_api.h"
#include "hip_backend/hiprtc/hiprtc_arch_options.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/hiprtc/hiprtc_release.h"
#include "hip_backend/hiprtc/inprocess_internal.h"
#include "hip_backend/rtc/runtime_compile_program.h"
#include "hip_backend/source_name_policy.h"
#include "support/log.h"

namespace hipacm::backend {

namespace {

struct HiprtcCalls {
  HIPACM_RUNTIME_COMPILE_CALLS(HiprtcApi, hiprtc_program, hiprtc, "hipRTC")
  // hipRTC fails silently when comgr rejects an option or the target.
  static constexpr const char* kEmptyLogHint =
      " with an empty log (usually a bad option or target arch)";
};

using HiprtcProgram = RuntimeCompileProgram<HiprtcCalls>;
constexpr HiprtcProgram::CodeCalls kHiprtcCode = {
    &HiprtcApi::hiprtcGetCodeSize, &HiprtcApi::hiprtcGetCode, "GetCodeSize", "GetCode"};

// Everything before hipRTC sees the request. hipRTC aborts the process on an unknown arch, so
// every arch in the request is checked, against comgr's list and what `hiprtc` is known to do.
CheckedRequest checked_request(const CompileRequest& request, const HiprtcFacts& hiprtc) {
  std::vector<std::string> options = hiprtc_arch_options(request, [&](const std::string& arch) {
    return validate_amdgpu_arch(arch, nullptr, &hiprtc);
  });
  check_request_text(request);
  // comgr writes each header to <temp dir>/include/<name>: a name that
  // leaves that directory must never reach it, whoever sent the request
  // (the host validates too; a worker does not trust its host's checks).
  if (const Expected<void> names = request_names_allowed(request); !names) {
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, names.failure().message);
  }
  check_request_counts(request, 0, options.size());
  options.insert(options.end(), request.options.begin(), request.options.end());
  return {std::move(options), NameExpressions(request.name_expressions)};
}

// Which hipRTC this process compiles with, said once, at its first compile.
void announce_library() {
  static constinit std::atomic<bool> announced{false};
  log_compiler_chosen_once(announced, "hipRTC", &load_hiprtc);
}

}  // namespace

CompileResult compile_with_hiprtc_api(const HiprtcApi* api, const std::string& load_error,
                                      const CompileRequest& request) {
  return run_checked_compile("hipRTC", request, [&](CompiledProgram* out, double* seconds) {
    const CheckedRequest checked =
        checked_request(request, api != nullptr ? loaded_hiprtc_facts() : HiprtcFacts{});
    const HiprtcApi& loaded = require_loaded(api, load_error);
    const RocmBackendLock lock;
    const Stopwatch stopwatch(seconds);  // the compile alone, not the wait for the lock
    HiprtcProgram(loaded, request, ProgramHeaders(request))
        .run(checked.options, checked.names, kHiprtcCode, out);
  });
}

std::vector<std::string> hiprtc_compile_options(const CompileRequest& request) {
  return checked_request(request, loaded_hiprtc_facts()).options;
}

CompileResult compile_with_hiprtc(const CompileRequest& request) {
  announce_library();
  return compile_with_loaded(load_hiprtc, "cannot load hipRTC", compile_with_hiprtc_api, request);
}

}  // namespace hipacm::backend
