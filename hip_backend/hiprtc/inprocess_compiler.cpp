// inprocess_compiler.cpp - one hipRTC compile under the process-wide lock, checked before success.
#include "hip_backend/hiprtc/inprocess_compiler.h"

#include <string_view>

#include "hip_backend/hiprtc/backend_lock.h"
#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/hiprtc/inprocess_internal.h"
#include "hip_backend/rtc/runtime_compile_program.h"
#include "hip_backend/source_name_policy.h"

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

constexpr std::string_view kArchOptions[] = {"--gpu-architecture=", "--offload-arch="};

// hipRTC aborts the process on an unknown arch, so every arch that reaches it
// is validated here, including any the caller put in the options. Returns
// whether the options already name the arch.
bool check_arch_options(const CompileRequest& request) {
  std::string error;
  if (!validate_amdgpu_arch(request.arch, &error)) {
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, error);
  }
  const std::string_view processor =
      std::string_view(request.arch).substr(0, request.arch.find(':'));
  bool has_arch = false;
  for (const std::string& option : request.options) {
    require_no_nul(option, "option");
    for (std::string_view prefix : kArchOptions) {
      const std::string_view bare = prefix.substr(0, prefix.size() - 1);
      if (option == bare) {
        fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "option '" + option +
                                                        "' needs its value after '=' (" +
                                                        std::string(prefix) + "gfx90a)");
      }
      if (option.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string value = option.substr(prefix.size());
      if (!validate_amdgpu_arch(value, &error)) {
        fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "option '" + option + "': " + error);
      }
      if (std::string_view(value).substr(0, value.find(':')) != processor) {
        fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "option '" + option +
                                                        "' conflicts with the arch '" +
                                                        request.arch + "' of the request");
      }
      has_arch = true;
    }
  }
  return has_arch;
}

// Everything before hipRTC sees the request.
CheckedRequest checked_request(const CompileRequest& request) {
  const bool options_name_arch = check_arch_options(request);
  check_request_text(request);
  // comgr writes each header to <temp dir>/include/<name>: a name that
  // leaves that directory must never reach it, whoever sent the request
  // (the host validates too; a worker does not trust its host's checks).
  std::string name_error;
  if (!request_names_allowed(request, &name_error)) {
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, name_error);
  }
  check_request_counts(request, 0, 1);
  std::vector<std::string> options;
  if (!options_name_arch) options.push_back("--gpu-architecture=" + request.arch);
  options.insert(options.end(), request.options.begin(), request.options.end());
  return {std::move(options), NameExpressions(request.name_expressions)};
}

}  // namespace

CompileResult compile_with_hiprtc_api(const HiprtcApi* api, const std::string& load_error,
                                      const CompileRequest& request) {
  return run_checked_compile("hipRTC", request, [&](CompiledProgram* out, double* seconds) {
    const CheckedRequest checked = checked_request(request);
    const HiprtcApi& loaded = require_loaded(api, load_error);
    const RocmBackendLock lock;
    const Stopwatch stopwatch(seconds);  // the compile alone, not the wait for the lock
    HiprtcProgram(loaded, request, ProgramHeaders(request))
        .run(checked.options, checked.names, kHiprtcCode, out);
  });
}

CompileResult compile_with_hiprtc(const CompileRequest& request) {
  return compile_with_loaded(load_hiprtc, "cannot load hipRTC", compile_with_hiprtc_api, request);
}

}  // namespace hipacm::backend
