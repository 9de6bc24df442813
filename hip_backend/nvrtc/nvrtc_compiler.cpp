// SPDX-License-Identifier: MIT
// nvrtc_compiler.cpp - one NVRTC compile of a HIP source: options, prelude, code object, check.
#include "hip_backend/nvrtc/nvrtc_compiler.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <optional>
#include <string_view>

#include "hip_backend/nvrtc/nvrtc_api.h"
#include "hip_backend/nvrtc/nvrtc_facts.h"
#include "hip_backend/nvrtc/nvrtc_prelude.h"
#include "hip_backend/raw_nvrtc.h"
#include "hip_backend/rtc/runtime_compile_program.h"
#include "hip_backend/target_arch.h"
#include "support/libraries/dynamic_library.h"
#include "support/log.h"

namespace hipacm::backend {

namespace {

struct NvrtcCalls {
  HIPACM_RUNTIME_COMPILE_CALLS(NvrtcApi, nvrtc_program, nvrtc, "NVRTC")
  static constexpr const char* kEmptyLogHint = " with an empty log";
};

using NvrtcProgram = RuntimeCompileProgram<NvrtcCalls>;
// compute_XX archs are virtual: NVRTC makes PTX text for them, with its terminating NUL.
constexpr NvrtcProgram::CodeCalls kPtxCode = {&NvrtcApi::nvrtcGetPTXSize, &NvrtcApi::nvrtcGetPTX,
                                              "GetPTXSize", "GetPTX"};
constexpr NvrtcProgram::CodeCalls kCubinCode = {
    &NvrtcApi::nvrtcGetCUBINSize, &NvrtcApi::nvrtcGetCUBIN, "GetCUBINSize", "GetCUBIN"};

constexpr std::string_view kArchPrefixes[] = {"--gpu-architecture=", "--offload-arch=", "-arch="};
// hipRTC/clang code-generation flags with no NVRTC meaning: wave size, CU
// mode, xnack, AMD atomics. Dropped so one option list serves both platforms.
constexpr std::string_view kAmdOnlyPrefixes[] = {"-mwavefrontsize64",
                                                 "-mno-wavefrontsize64",
                                                 "-mcumode",
                                                 "-mno-cumode",
                                                 "-mxnack",
                                                 "-mno-xnack",
                                                 "-munsafe-fp-atomics",
                                                 "-mno-unsafe-fp-atomics",
                                                 "-fno-gpu-rdc"};

// "sm_90a" -> "90a": two spellings of an arch agree when their numbers do.
std::string_view arch_suffix(std::string_view arch) {
  return arch.substr(arch.find('_') == std::string_view::npos ? 0 : arch.find('_') + 1);
}

// The number in "sm_90a", or -1 when the text after the prefix is not
// digits with an optional 'a' (arch-specific features) suffix.
int arch_number(std::string_view arch) {
  std::string_view rest = arch_suffix(arch);
  if (rest.ends_with('a')) rest.remove_suffix(1);
  int number = -1;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
  if (rest.empty() || ec != std::errc() || end != rest.data() + rest.size()) return -1;
  return number;
}

std::string supported_list(const std::vector<int>& archs) {
  std::string list;
  for (int number : archs) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(number);
  return list;
}

// The prelude first, as hip/hip_runtime.h, unless the caller sends their own.
ProgramHeaders headers_with_prelude(const CompileRequest& request) {
  ProgramHeaders headers;
  headers.add(kHipPreludeName, hip_prelude_source());
  for (const auto& [name, text] : request.headers) {
    if (name == kHipPreludeName) {
      headers.contents[0] = text.c_str();
    } else {
      headers.add(name.c_str(), text.c_str());
    }
  }
  return headers;
}

// Everything before NVRTC sees the request, but for the arch check that loads it.
CheckedRequest checked_request(const CompileRequest& request) {
  if (!is_nvidia_arch(request.arch)) {
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "NVRTC cannot compile for '" + request.arch + "'");
  }
  check_request_text(request, /*allow_empty_source=*/is_raw_nvrtc(request.options));
  if (is_raw_nvrtc(request.options)) {
    // A CUDA program's own compile: its options exactly, after the marker.
    check_request_counts(request, 0, 0);
    return {std::vector<std::string>(request.options.begin() + 1, request.options.end()),
            NameExpressions(request.name_expressions)};
  }
  check_request_counts(request, 1, 2);  // the prelude; the arch and the pre-include
  Expected<std::vector<std::string>> options =
      translate_options_for_nvrtc(request.options, request.arch);
  if (!options) fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, options.failure().message);
  return {std::move(options).value(), NameExpressions(request.name_expressions)};
}

// A CUDA program's compile is served only by the NVRTC file it called: another release (or a
// pip wheel's copy under the same soname) may make other bytes.
void require_programs_nvrtc(const NvrtcApi& loaded, const std::vector<std::string>& options) {
  if (options.front() != raw_nvrtc_option(real_file_path(loaded.library_path)))
    fail_compile(
        HIPACM_ERROR_INVALID_ARGUMENT,
        "the program's NVRTC is not the one this process loaded (" + loaded.library_path + ")");
}

// Which NVRTC this process compiles with, said once, at its first compile.
void announce_library() {
  static constinit std::atomic<bool> announced{false};
  log_compiler_chosen_once(announced, "NVRTC", &load_nvrtc);
}

}  // namespace

Expected<void> validate_nvidia_arch(const std::string& arch, LibraryFactMemo* memo) {
  const Expected<NvrtcFacts> facts = nvrtc_facts(memo);
  if (!facts) {
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   "arch '" + arch + "' needs NVRTC: " + facts.failure().message};
  }
  const int number = is_nvidia_arch(arch) ? arch_number(arch) : -1;
  const auto& supported = facts->archs;
  if (number >= 0 && std::find(supported.begin(), supported.end(), number) != supported.end()) {
    return {};
  }
  return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                 "unknown NVIDIA arch '" + arch + "'; " + facts->identity + " supports " +
                     (supported.empty() ? std::string("none (nvrtcGetSupportedArchs failed)")
                                        : supported_list(supported)) +
                     " (as sm_XX for CUBIN or compute_XX for PTX, optionally with an 'a' suffix)"};
}

Expected<std::vector<std::string>> translate_options_for_nvrtc(
    const std::vector<std::string>& options, const std::string& arch) {
  std::vector<std::string> out;
  out.push_back("--gpu-architecture=" + arch);
  out.push_back(std::string("--pre-include=") + kHipPreludeName);
  for (const std::string& option : options) {
    bool names_arch = false;
    for (std::string_view prefix : kArchPrefixes) {
      if (!option.starts_with(prefix)) continue;
      const std::string value = option.substr(prefix.size());
      if (!is_nvidia_arch(value) || arch_suffix(value) != arch_suffix(arch)) {
        return Failure{
            HIPACM_ERROR_INVALID_ARGUMENT,
            "option '" + option + "' conflicts with the arch '" + arch + "' of the request"};
      }
      names_arch = true;
    }
    if (names_arch) continue;  // the arch option above already says it
    // NVRTC optimizes fully by default and rejects clang's -O levels.
    if (option.size() <= 3 && option.starts_with("-O")) continue;
    bool amd_only = false;
    for (std::string_view flag : kAmdOnlyPrefixes) amd_only = amd_only || option == flag;
    if (amd_only) continue;
    if (option == "-ffast-math") {
      out.push_back("--use_fast_math");
    } else if (option == "-fgpu-rdc") {
      out.push_back("--relocatable-device-code=true");
    } else if (option == "-g" || option == "-ggdb") {
      out.push_back("--generate-line-info");
    } else {
      out.push_back(option);
    }
  }
  return out;
}

CompileResult compile_with_nvrtc_api(const NvrtcApi* api, const std::string& load_error,
                                     const CompileRequest& request) {
  return run_checked_compile("NVRTC", request, [&](CompiledProgram* out, double* seconds) {
    const CheckedRequest checked = checked_request(request);
    const NvrtcApi& loaded = require_loaded(api, load_error);
    // A CUDA program's own compile: its NVRTC judges the arch, as it would in the program.
    if (is_raw_nvrtc(request.options)) {
      require_programs_nvrtc(loaded, request.options);
    } else if (const Expected<void> arch = validate_nvidia_arch(request.arch); !arch) {
      fail_compile(arch.failure().status, arch.failure().message);
    }
    // NVRTC is thread-safe: no lock, unlike hipRTC.
    const Stopwatch stopwatch(seconds);
    NvrtcProgram(
        loaded, request,
        is_raw_nvrtc(request.options) ? ProgramHeaders(request) : headers_with_prelude(request))
        .run(checked.options, checked.names, is_ptx_arch(request.arch) ? kPtxCode : kCubinCode,
             out);
  });
}

CompileResult compile_with_nvrtc(const CompileRequest& request) {
  if (is_raw_nvrtc(request.options)) {
    // With the NVRTC file the program called, which may not be the one load_nvrtc() finds.
    const auto load_programs_nvrtc = [&request]() -> Expected<const NvrtcApi*> {
      const std::string file = raw_nvrtc_library(request.options);
      if (file.empty())
        return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                       "the request's raw NVRTC marker names no file"};
      return load_nvrtc_file(file);
    };
    return compile_with_loaded(load_programs_nvrtc, "cannot load NVRTC", compile_with_nvrtc_api,
                               request);
  }
  announce_library();
  return compile_with_loaded(load_nvrtc, "cannot load NVRTC", compile_with_nvrtc_api, request);
}

}  // namespace hipacm::backend
