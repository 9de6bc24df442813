// inprocess_compiler.cpp - one hipRTC compile under the process-wide lock, checked before success.
#include "hip_backend/hiprtc/inprocess_compiler.h"

#include <boost/thread/lock_guard.hpp>

#include <chrono>
#include <climits>
#include <cstring>
#include <new>
#include <string_view>
#include <unordered_map>

#include "hip_backend/hiprtc/comgr_isa.h"
#include "hip_backend/compile_result_check.h"
#include "hip_backend/hiprtc/hiprtc_internal.h"
#include "hip_backend/hiprtc/inprocess_internal.h"
#include "hip_backend/source_name_policy.h"

namespace hipacm::backend {

namespace {

constexpr std::string_view kArchOptions[] = {"--gpu-architecture=", "--offload-arch="};
// Sizes past these are not a code object or a log but a broken library; they
// would also overflow the one spare byte added below.
constexpr std::size_t kMaxCodeSize = std::size_t{1} << 30;
constexpr std::size_t kMaxLogSize = std::size_t{64} << 20;

// Thrown inside compile_request and turned into a result at its boundary.
struct Failure {
  hipacm_status status;
  std::string message;
};

[[noreturn]] void fail(hipacm_status status, std::string message) {
  throw Failure{status, std::move(message)};
}

hipacm_status status_for(hiprtc_result result) {
  switch (result) {
    case kHiprtcErrorOutOfMemory:
      return HIPACM_ERROR_OUT_OF_MEMORY;
    case kHiprtcErrorInvalidInput:  // e.g. an empty header name or name expression
      return HIPACM_ERROR_INVALID_ARGUMENT;
    case kHiprtcErrorCompilation:
    case kHiprtcErrorInvalidOption:
    case kHiprtcErrorBuiltinOperationFailure:
    case kHiprtcErrorNameExpressionNotValid:
      return HIPACM_ERROR_COMPILATION;
    default:
      return HIPACM_ERROR_INTERNAL;
  }
}

void check_call(hiprtc_result result, const std::string& call) {
  if (result != kHiprtcSuccess) {
    fail(status_for(result), call + " failed: " + hiprtc_result_name(result));
  }
}

// hipRTC takes C strings; an embedded NUL would silently cut the input short.
void require_no_nul(const std::string& text, const std::string& what) {
  const std::size_t at = text.find('\0');
  if (at != std::string::npos) {
    fail(HIPACM_ERROR_INVALID_ARGUMENT,
         what + " contains a NUL byte at offset " + std::to_string(at));
  }
}

// hipRTC aborts the process on an unknown arch, so every arch that reaches it
// is validated here, including any the caller put in the options. Returns
// whether the options already name the arch.
bool check_arch_options(const CompileRequest& request) {
  std::string error;
  if (!validate_amdgpu_arch(request.arch, &error)) fail(HIPACM_ERROR_INVALID_ARGUMENT, error);
  const std::string_view processor =
      std::string_view(request.arch).substr(0, request.arch.find(':'));
  bool has_arch = false;
  for (const std::string& option : request.options) {
    require_no_nul(option, "option");
    for (std::string_view prefix : kArchOptions) {
      const std::string_view bare = prefix.substr(0, prefix.size() - 1);
      if (option == bare) {
        fail(HIPACM_ERROR_INVALID_ARGUMENT, "option '" + option + "' needs its value after '=' (" +
                                                std::string(prefix) + "gfx90a)");
      }
      if (option.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string value = option.substr(prefix.size());
      if (!validate_amdgpu_arch(value, &error)) {
        fail(HIPACM_ERROR_INVALID_ARGUMENT, "option '" + option + "': " + error);
      }
      if (std::string_view(value).substr(0, value.find(':')) != processor) {
        fail(HIPACM_ERROR_INVALID_ARGUMENT, "option '" + option + "' conflicts with the arch '" +
                                                request.arch + "' of the request");
      }
      has_arch = true;
    }
  }
  return has_arch;
}

// Destroys the program on every path out of the compile.
class Program {
 public:
  Program(const HiprtcApi& api, const CompileRequest& request) : api_(api) {
    std::vector<const char*> contents;
    std::vector<const char*> names;
    for (const auto& [name, text] : request.headers) {
      names.push_back(name.c_str());
      contents.push_back(text.c_str());
    }
    check_call(
        api_.hiprtcCreateProgram(&program_, request.source.c_str(), request.source_name.c_str(),
                                 static_cast<int>(names.size()), contents.data(), names.data()),
        "hiprtcCreateProgram");
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (program_ != nullptr) api_.hiprtcDestroyProgram(&program_);
  }
  hiprtc_program get() const { return program_; }

 private:
  const HiprtcApi& api_;
  hiprtc_program program_ = nullptr;
};

std::string read_log(const HiprtcApi& api, hiprtc_program program) {
  std::size_t size = 0;
  if (api.hiprtcGetProgramLogSize(program, &size) != kHiprtcSuccess || size == 0) return "";
  if (size > kMaxLogSize) return "(hipRTC reported a " + std::to_string(size) + "-byte log)";
  // One spare byte: whether the size counts the terminating NUL is not
  // documented, and hipRTC writes one.
  std::string log(size + 1, '\0');
  if (api.hiprtcGetProgramLog(program, log.data()) != kHiprtcSuccess) return "";
  log.resize(strnlen(log.data(), log.size()));
  return log;
}

struct Compiled {
  std::string log;
  std::vector<std::uint8_t> code;
  std::vector<std::string> lowered_names;  ///< one per unique name expression
};

// Everything that touches hipRTC; the caller holds hiprtc_mutex(). Fills *out
// as it goes, so a failure still leaves the log there.
void run_hiprtc(const HiprtcApi& api, const CompileRequest& request,
                const std::vector<std::string>& options,
                const std::vector<std::string>& unique_expressions, Compiled* out) {
  Program program(api, request);
  for (const std::string& expression : unique_expressions) {
    check_call(api.hiprtcAddNameExpression(program.get(), expression.c_str()),
               "hiprtcAddNameExpression(\"" + expression + "\")");
  }
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  const hiprtc_result compiled =
      api.hiprtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
  out->log = read_log(api, program.get());
  if (compiled != kHiprtcSuccess) {
    fail(status_for(compiled),
         "hiprtcCompileProgram failed: " + hiprtc_result_name(compiled) +
             (out->log.empty() ? " with an empty log (usually a bad option or target arch)"
                               : " (see log)"));
  }
  std::size_t size = 0;
  check_call(api.hiprtcGetCodeSize(program.get(), &size), "hiprtcGetCodeSize");
  if (size == 0) fail(HIPACM_ERROR_COMPILATION, "hipRTC reported success but produced no code");
  if (size > kMaxCodeSize) {
    fail(HIPACM_ERROR_INTERNAL, "hiprtcGetCodeSize reported " + std::to_string(size) + " bytes");
  }
  out->code.resize(size + 1);  // a spare byte, as for the log
  check_call(api.hiprtcGetCode(program.get(), reinterpret_cast<char*>(out->code.data())),
             "hiprtcGetCode");
  out->code.resize(size);
  for (const std::string& expression : unique_expressions) {
    const char* lowered = nullptr;
    check_call(api.hiprtcGetLoweredName(program.get(), expression.c_str(), &lowered),
               "hiprtcGetLoweredName(\"" + expression + "\")");
    if (lowered == nullptr) {
      fail(HIPACM_ERROR_INTERNAL, "hiprtcGetLoweredName(\"" + expression + "\") gave no name");
    }
    out->lowered_names.emplace_back(lowered);
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CompileResult compile_request(const HiprtcApi* api, const std::string& load_error,
                              const CompileRequest& request) {
  CompileResult result;
  Compiled compiled;
  try {
    const bool options_name_arch = check_arch_options(request);
    if (request.source.empty()) fail(HIPACM_ERROR_INVALID_ARGUMENT, "the source is empty");
    require_no_nul(request.source, "source");
    require_no_nul(request.source_name, "source name");
    for (const auto& [name, text] : request.headers) {
      if (name.empty()) fail(HIPACM_ERROR_INVALID_ARGUMENT, "a header has an empty name");
      require_no_nul(name, "header name");
      require_no_nul(text, "header '" + name + "'");
    }
    // comgr writes each header to <temp dir>/include/<name>: a name that
    // leaves that directory must never reach it, whoever sent the request
    // (the host validates too; a worker does not trust its host's checks).
    std::string name_error;
    if (!request_names_allowed(request, &name_error))
      fail(HIPACM_ERROR_INVALID_ARGUMENT, name_error);
    if (request.headers.size() > INT_MAX || request.options.size() >= INT_MAX) {
      fail(HIPACM_ERROR_INVALID_ARGUMENT, "too many headers or options");
    }
    std::vector<std::string> options;
    if (!options_name_arch) options.push_back("--gpu-architecture=" + request.arch);
    options.insert(options.end(), request.options.begin(), request.options.end());

    // hipRTC 5.2.3 turns each name expression into a variable `__hiprtc_N`, so
    // a repeated expression fails with "redefinition of '__hiprtc_1'".
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

    {
      boost::lock_guard<boost::mutex> lock(hiprtc_mutex());
      const auto start = std::chrono::steady_clock::now();
      try {
        run_hiprtc(*api, request, options, unique_expressions, &compiled);
      } catch (...) {
        result.compile_seconds = seconds_since(start);
        throw;
      }
      result.compile_seconds = seconds_since(start);
    }

    for (const std::string& expression : request.name_expressions) {
      result.lowered_names.push_back(compiled.lowered_names[expression_index.at(expression)]);
    }
    std::string check_error;
    if (!check_compile_result(request, compiled.code, result.lowered_names, &check_error)) {
      fail(HIPACM_ERROR_COMPILATION,
           "hipRTC reported success, but hipacm's code-object check "
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

// Builds a failed result without letting another exception escape.
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

CompileResult compile_with_hiprtc_api(const HiprtcApi* api, const std::string& load_error,
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

CompileResult compile_with_hiprtc(const CompileRequest& request) {
  std::string load_error;
  const HiprtcApi* api = nullptr;
  try {
    api = load_hiprtc(&load_error);
  } catch (...) {
    return failed(HIPACM_ERROR_BACKEND_UNAVAILABLE, "cannot load hipRTC");
  }
  return compile_with_hiprtc_api(api, load_error, request);
}

CompileResult InProcessCompiler::compile(const CompileRequest& request) {
  return compile_for_target(request);
}

}  // namespace hipacm::backend
