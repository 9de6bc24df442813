// nvrtc_compiler.cpp - one NVRTC compile of a HIP source: options, prelude, code object, check.
#include "hip_backend/nvrtc/nvrtc_compiler.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <new>
#include <string_view>
#include <unordered_map>

#include "hip_backend/compile_result_check.h"
#include "hip_backend/nvrtc/nvrtc_prelude.h"
#include "hip_backend/target_arch.h"

namespace hipacm::backend {

namespace {

constexpr std::size_t kMaxCodeSize = std::size_t{1} << 30;
constexpr std::size_t kMaxLogSize = std::size_t{64} << 20;
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

struct Failure {
  hipacm_status status;
  std::string message;
};

[[noreturn]] void fail(hipacm_status status, std::string message) {
  throw Failure{status, std::move(message)};
}

hipacm_status status_for(nvrtc_result result) {
  switch (result) {
    case kNvrtcErrorOutOfMemory:
      return HIPACM_ERROR_OUT_OF_MEMORY;
    case kNvrtcErrorInvalidInput:
      return HIPACM_ERROR_INVALID_ARGUMENT;
    case kNvrtcErrorCompilation:
    case kNvrtcErrorInvalidOption:
    case kNvrtcErrorBuiltinOperationFailure:
    case kNvrtcErrorNameExpressionNotValid:
      return HIPACM_ERROR_COMPILATION;
    default:
      return HIPACM_ERROR_INTERNAL;
  }
}

void check_call(nvrtc_result result, const std::string& call) {
  if (result != kNvrtcSuccess) {
    fail(status_for(result), call + " failed: " + nvrtc_result_name(result));
  }
}

void require_no_nul(const std::string& text, const std::string& what) {
  const std::size_t at = text.find('\0');
  if (at != std::string::npos) {
    fail(HIPACM_ERROR_INVALID_ARGUMENT,
         what + " contains a NUL byte at offset " + std::to_string(at));
  }
}

// "sm_90a" -> "90a": two spellings of an arch agree when their numbers do.
std::string_view arch_number(std::string_view arch) {
  return arch.substr(arch.find('_') == std::string_view::npos ? 0 : arch.find('_') + 1);
}

class Program {
 public:
  Program(const NvrtcApi& api, const CompileRequest& request) : api_(api) {
    std::vector<const char*> contents = {hip_prelude_source()};
    std::vector<const char*> names = {kHipPreludeName};
    for (const auto& [name, text] : request.headers) {
      // The caller's own hip/hip_runtime.h replaces the prelude.
      if (name == kHipPreludeName) {
        contents[0] = text.c_str();
        continue;
      }
      names.push_back(name.c_str());
      contents.push_back(text.c_str());
    }
    check_call(
        api_.nvrtcCreateProgram(&program_, request.source.c_str(), request.source_name.c_str(),
                                static_cast<int>(names.size()), contents.data(), names.data()),
        "nvrtcCreateProgram");
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (program_ != nullptr) api_.nvrtcDestroyProgram(&program_);
  }
  nvrtc_program get() const { return program_; }

 private:
  const NvrtcApi& api_;
  nvrtc_program program_ = nullptr;
};

std::string read_log(const NvrtcApi& api, nvrtc_program program) {
  std::size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != kNvrtcSuccess || size == 0) return "";
  if (size > kMaxLogSize) return "(NVRTC reported a " + std::to_string(size) + "-byte log)";
  std::string log(size + 1, '\0');
  if (api.nvrtcGetProgramLog(program, log.data()) != kNvrtcSuccess) return "";
  log.resize(strnlen(log.data(), log.size()));
  return log;
}

struct Compiled {
  std::string log;
  std::vector<std::uint8_t> code;
  std::vector<std::string> lowered_names;
};

void read_code(const NvrtcApi& api, nvrtc_program program, bool ptx, Compiled* out) {
  std::size_t size = 0;
  const char* size_call = ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize";
  check_call(ptx ? api.nvrtcGetPTXSize(program, &size) : api.nvrtcGetCUBINSize(program, &size),
             size_call);
  if (size == 0) fail(HIPACM_ERROR_COMPILATION, std::string(size_call) + " reported no code");
  if (size > kMaxCodeSize) {
    fail(HIPACM_ERROR_INTERNAL, std::string(size_call) + " reported " + std::to_string(size));
  }
  out->code.resize(size);
  char* data = reinterpret_cast<char*>(out->code.data());
  check_call(ptx ? api.nvrtcGetPTX(program, data) : api.nvrtcGetCUBIN(program, data),
             ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN");
}

void run_nvrtc(const NvrtcApi& api, const CompileRequest& request,
               const std::vector<std::string>& options,
               const std::vector<std::string>& unique_expressions, Compiled* out) {
  Program program(api, request);
  for (const std::string& expression : unique_expressions) {
    check_call(api.nvrtcAddNameExpression(program.get(), expression.c_str()),
               "nvrtcAddNameExpression(\"" + expression + "\")");
  }
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  const nvrtc_result compiled =
      api.nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  out->log = read_log(api, program.get());
  if (compiled != kNvrtcSuccess) {
    fail(status_for(compiled), "nvrtcCompileProgram failed: " + nvrtc_result_name(compiled) +
                                   (out->log.empty() ? " with an empty log" : " (see log)"));
  }
  read_code(api, program.get(), is_ptx_arch(request.arch), out);
  for (const std::string& expression : unique_expressions) {
    const char* lowered = nullptr;
    check_call(api.nvrtcGetLoweredName(program.get(), expression.c_str(), &lowered),
               "nvrtcGetLoweredName(\"" + expression + "\")");
    if (lowered == nullptr) {
      fail(HIPACM_ERROR_INTERNAL, "nvrtcGetLoweredName(\"" + expression + "\") gave no name");
    }
    out->lowered_names.emplace_back(lowered);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CompileResult compile_request(const NvrtcApi* api, const std::string& load_error,
                              const CompileRequest& request) {
  CompileResult result;
  Compiled compiled;
  try {
    if (!is_nvidia_arch(request.arch)) {
      fail(HIPACM_ERROR_INVALID_ARGUMENT, "NVRTC cannot compile for '" + request.arch + "'");
    }
    if (request.source.empty()) fail(HIPACM_ERROR_INVALID_ARGUMENT, "the source is empty");
    require_no_nul(request.source, "source");
    require_no_nul(request.source_name, "source name");
    for (const std::string& option : request.options) require_no_nul(option, "option");
    for (const auto& [name, text] : request.headers) {
      if (name.empty()) fail(HIPACM_ERROR_INVALID_ARGUMENT, "a header has an empty name");
      require_no_nul(name, "header name");
      require_no_nul(text, "header '" + name + "'");
    }
    if (request.headers.size() >= INT_MAX || request.options.size() >= INT_MAX - 2) {
      fail(HIPACM_ERROR_INVALID_ARGUMENT, "too many headers or options");
    }
    std::vector<std::string> options;
    std::string option_error;
    if (!translate_options_for_nvrtc(request.options, request.arch, &options, &option_error)) {
      fail(HIPACM_ERROR_INVALID_ARGUMENT, option_error);
    }
    std::vector<std::string> unique_expressions;
    std::unordered_map<std::string, std::size_t> expression_index;
    for (const std::string& expression : request.name_expressions) {
      if (expression.empty()) fail(HIPACM_ERROR_INVALID_ARGUMENT, "a name expression is empty");
      require_no_nul(expression, "name expression");
      if (expression_index.emplace(expression, unique_expressions.size()).second) {
        unique_expressions.push_back(expression);
      }
    }
    if (api == nullptr) fail(HIPACM_ERROR_BACKEND_UNAVAILABLE, load_error);
    std::string arch_error;
    const hipacm_status arch_status = validate_nvidia_arch(request.arch, &arch_error);
    if (arch_status != HIPACM_SUCCESS) fail(arch_status, arch_error);

    const auto start = std::chrono::steady_clock::now();
    try {
      run_nvrtc(*api, request, options, unique_expressions, &compiled);
    } catch (...) {
      result.compile_seconds = seconds_since(start);
      throw;
    }
    result.compile_seconds = seconds_since(start);

    for (const std::string& expression : request.name_expressions) {
      result.lowered_names.push_back(compiled.lowered_names[expression_index.at(expression)]);
    }
    std::string check_error;
    if (!check_compile_result(request, compiled.code, result.lowered_names, &check_error)) {
      fail(HIPACM_ERROR_COMPILATION,
           "NVRTC reported success, but hipacm's code-object check "
           "rejected its output: " +
               check_error);
    }
    result.status = HIPACM_SUCCESS;
    result.log = std::move(compiled.log);
    result.code = std::move(compiled.code);
  } catch (Failure& failure) {
    result.status = failure.status;
    result.error_message = std::move(failure.message);
    result.log = std::move(compiled.log);
    result.code.clear();
    result.lowered_names.clear();
  }
  return result;
}

CompileResult failed(hipacm_status status, const char* message, const char* detail = "") noexcept {
  CompileResult result;
  result.status = status;
  try {
    result.error_message = std::string(message) + detail;
  } catch (...) {
    // Out of memory even for the message: the status alone has to do.
  }
  return result;
}

}  // namespace

bool translate_options_for_nvrtc(const std::vector<std::string>& options, const std::string& arch,
                                 std::vector<std::string>* translated, std::string* error) {
  translated->clear();
  translated->push_back("--gpu-architecture=" + arch);
  translated->push_back(std::string("--pre-include=") + kHipPreludeName);
  for (const std::string& option : options) {
    bool names_arch = false;
    for (std::string_view prefix : kArchPrefixes) {
      if (!option.starts_with(prefix)) continue;
      const std::string value = option.substr(prefix.size());
      if (!is_nvidia_arch(value) || arch_number(value) != arch_number(arch)) {
        *error = "option '" + option + "' conflicts with the arch '" + arch + "' of the request";
        return false;
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
      translated->push_back("--use_fast_math");
    } else if (option == "-fgpu-rdc") {
      translated->push_back("--relocatable-device-code=true");
    } else if (option == "-g" || option == "-ggdb") {
      translated->push_back("--generate-line-info");
    } else {
      translated->push_back(option);
    }
  }
  return true;
}

CompileResult compile_with_nvrtc_api(const NvrtcApi* api, const std::string& load_error,
                                     const CompileRequest& request) {
  try {
    return compile_request(api, load_error, request);
  } catch (const std::bad_alloc&) {
    return failed(HIPACM_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return failed(HIPACM_ERROR_INTERNAL, "internal error during the compile: ", e.what());
  } catch (...) {
    return failed(HIPACM_ERROR_INTERNAL, "unknown exception during the compile");
  }
}

CompileResult compile_with_nvrtc(const CompileRequest& request) {
  std::string load_error;
  const NvrtcApi* api = nullptr;
  try {
    api = load_nvrtc(&load_error);
  } catch (...) {
    return failed(HIPACM_ERROR_BACKEND_UNAVAILABLE, "cannot load NVRTC");
  }
  return compile_with_nvrtc_api(api, load_error, request);
}

}  // namespace hipacm::backend
