// SPDX-License-Identifier: MIT
// runtime_compile_program.h - one program template for hipRTC and NVRTC, with the request checks,
// result mapping and error path that both compiles share.
#pragma once

#include <hipacm/hipacm.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hip_backend/compiler.h"
#include "hip_backend/rtc/compile_log_paths.h"
#include "hip_backend/rtc/rtc_shared.h"
#include "support/failure.h"

namespace hipacm::backend {

// kRtcSuccess, kRtcErrorCompilation, ...: the result codes hipRTC and NVRTC share, so one mapping
// serves both.
#define HIPACM_RTC_RESULT_CONSTANT(name, value) inline constexpr int kRtc##name = value;
HIPACM_RTC_RESULT_CODES(HIPACM_RTC_RESULT_CONSTANT)
#undef HIPACM_RTC_RESULT_CONSTANT

/// The hipacm status for a hipRTC or NVRTC result.
hipacm_status runtime_compile_status(int result);

/// Throws the StatusError that the compile's one error path (run_checked_compile) turns into a
/// result.
[[noreturn]] void fail_compile(hipacm_status status, std::string message);

/// Both libraries take C strings: an embedded NUL would silently cut the input short, so it is
/// INVALID_ARGUMENT ("<what> contains a NUL byte at offset N").
void require_no_nul(const std::string& text, const std::string& what);

/// What both libraries need of any request: a source (unless `allow_empty_source`: a CUDA
/// program's own compile, which NVRTC takes empty too), no NUL byte in the source, its name, the
/// options or the headers, and a name for every header. INVALID_ARGUMENT otherwise.
void check_request_text(const CompileRequest& request, bool allow_empty_source = false);

/// INVALID_ARGUMENT unless the headers and options, with the `extra_headers` and `extra_options`
/// a path adds to them, fit the libraries' int counts.
void check_request_counts(const CompileRequest& request, std::size_t extra_headers,
                          std::size_t extra_options);

/// The request's name expressions, each once: hipRTC 5.2.3 turns each into a variable
/// `__hiprtc_N`, so a repeated expression fails with "redefinition of '__hiprtc_1'".
class NameExpressions {
 public:
  /// INVALID_ARGUMENT for an empty expression or one holding a NUL byte.
  explicit NameExpressions(const std::vector<std::string>& requested);
  const std::vector<std::string>& unique() const { return unique_; }
  /// `lowered` (one per unique() entry) spread back over the request's order.
  std::vector<std::string> in_request_order(const std::vector<std::string>& lowered) const;

 private:
  std::vector<std::string> unique_;
  std::vector<std::size_t> order_;  ///< per requested expression, its index in unique_
};

/// A request that passed every check a path makes before it needs the library.
struct CheckedRequest {
  std::vector<std::string> options;  ///< what the library compiles with
  NameExpressions names;
};

/// *api, or BACKEND_UNAVAILABLE with `load_error` when the library could not be loaded.
template <class Table>
const Table& require_loaded(const Table* api, const std::string& load_error) {
  if (api == nullptr) fail_compile(HIPACM_ERROR_BACKEND_UNAVAILABLE, load_error);
  return *api;
}

/// The virtual headers as the create call takes them: C strings that point into the request.
struct ProgramHeaders {
  std::vector<const char*> names;
  std::vector<const char*> contents;

  ProgramHeaders() = default;
  /// The request's headers, in its order.
  explicit ProgramHeaders(const CompileRequest& request);
  void add(const char* name, const char* text) {
    names.push_back(name);
    contents.push_back(text);
  }
};

/// What one compile made. Filled as it goes, so a failure still leaves the log here.
struct CompiledProgram {
  std::string log;
  std::vector<std::uint8_t> code;
  std::vector<std::string> lowered_names;  ///< in the request's name-expression order
};

/// Writes the seconds since its construction to *out on every path out of a scope.
class Stopwatch {
 public:
  explicit Stopwatch(double* out) : out_(out) {}
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;
  ~Stopwatch() {
    *out_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Sizes past these are not a code object or a log but a broken library; they would also overflow
// the one spare byte read below.
inline constexpr std::size_t kMaxRuntimeCodeSize = std::size_t{1} << 30;
inline constexpr std::size_t kMaxRuntimeLogSize = std::size_t{64} << 20;

/// Inside a struct: what RuntimeCompileProgram needs of a library whose table `TableType` names
/// its entry points <prefix>CreateProgram, <prefix>GetProgramLog and so on, and whose result
/// names come from <prefix>_result_name(). `library_name` is the library in messages.
#define HIPACM_RUNTIME_COMPILE_CALLS(TableType, HandleType, prefix, library_name) \
  using Table = TableType;                                                        \
  using Handle = HandleType;                                                      \
  static constexpr const char* kLibrary = library_name;                           \
  static constexpr const char* kPrefix = #prefix;                                 \
  static constexpr auto create = &Table::prefix##CreateProgram;                   \
  static constexpr auto destroy = &Table::prefix##DestroyProgram;                 \
  static constexpr auto add_name_expression = &Table::prefix##AddNameExpression;  \
  static constexpr auto compile = &Table::prefix##CompileProgram;                 \
  static constexpr auto log_size = &Table::prefix##GetProgramLogSize;             \
  static constexpr auto log = &Table::prefix##GetProgramLog;                      \
  static constexpr auto lowered_name = &Table::prefix##GetLoweredName;            \
  static std::string result_name(int result) { return prefix##_result_name(result); }

/// One hipRTC or NVRTC program, destroyed on every path out. `Calls` describes the library
/// (HIPACM_RUNTIME_COMPILE_CALLS plus kEmptyLogHint, what a failed compile with an empty log
/// adds to its message). Every failing call throws (fail_compile) with the call named.
template <class Calls>
class RuntimeCompileProgram {
 public:
  using Table = typename Calls::Table;
  using Handle = typename Calls::Handle;

  /// The pair of calls that sizes and copies the program's output; names are after the prefix.
  using SizeCall = int (*)(Handle, std::size_t*);
  using CopyCall = int (*)(Handle, char*);
  struct CodeCalls {
    SizeCall Table::*size;
    CopyCall Table::*copy;
    const char* size_name;
    const char* copy_name;
  };

  RuntimeCompileProgram(const Table& api, const CompileRequest& request, ProgramHeaders headers)
      : api_(api), source_name_(request.source_name) {
    check((api_.*Calls::create)(&program_, request.source.c_str(), request.source_name.c_str(),
                                static_cast<int>(headers.names.size()), headers.contents.data(),
                                headers.names.data()),
          "CreateProgram");
  }
  RuntimeCompileProgram(const RuntimeCompileProgram&) = delete;
  RuntimeCompileProgram& operator=(const RuntimeCompileProgram&) = delete;
  ~RuntimeCompileProgram() {
    if (program_ != nullptr) (api_.*Calls::destroy)(&program_);
  }

  /// The one order both libraries need: name expressions, compile, log, code, lowered names.
  /// Fills *out as it goes.
  void run(const std::vector<std::string>& options, const NameExpressions& names,
           const CodeCalls& code, CompiledProgram* out) {
    for (const std::string& expression : names.unique()) {
      check((api_.*Calls::add_name_expression)(program_, expression.c_str()),
            "AddNameExpression(\"" + expression + "\")");
    }
    std::vector<const char*> argv;
    for (const std::string& option : options) argv.push_back(option.c_str());
    const int compiled =
        (api_.*Calls::compile)(program_, static_cast<int>(argv.size()), argv.data());
    // Users know their file by the name they gave it, not by comgr's temporary copy.
    out->log = with_request_file_names(read_log(), source_name_);
    if (compiled != kRtcSuccess) {
      fail_compile(runtime_compile_status(compiled),
                   call("CompileProgram") + " failed: " + Calls::result_name(compiled) +
                       (out->log.empty() ? Calls::kEmptyLogHint : " (see log)"));
    }
    out->code = read_code(code);
    out->lowered_names = names.in_request_order(lowered_names(names.unique()));
  }

 private:
  std::string call(std::string_view name) const { return Calls::kPrefix + std::string(name); }

  void check(int result, std::string_view name) const {
    if (result != kRtcSuccess) {
      fail_compile(runtime_compile_status(result),
                   call(name) + " failed: " + Calls::result_name(result));
    }
  }

  std::string read_log() const {
    std::size_t size = 0;
    if ((api_.*Calls::log_size)(program_, &size) != kRtcSuccess || size == 0) return "";
    if (size > kMaxRuntimeLogSize) {
      // Appended, not `"(" + std::string(...)`: GCC 12 at -O3 reports a false -Wrestrict for a
      // literal plus a temporary string (GCC PR 105329).
      std::string note = "(";
      note += Calls::kLibrary;
      note += " reported a " + std::to_string(size) + "-byte log)";
      return note;
    }
    // One spare byte: whether the size counts the terminating NUL is not documented, and the
    // library writes one.
    std::string log(size + 1, '\0');
    if ((api_.*Calls::log)(program_, log.data()) != kRtcSuccess) return "";
    log.resize(strnlen(log.data(), log.size()));
    return log;
  }

  std::vector<std::uint8_t> read_code(const CodeCalls& calls) const {
    std::size_t size = 0;
    check((api_.*calls.size)(program_, &size), calls.size_name);
    if (size == 0) {
      fail_compile(HIPACM_ERROR_COMPILATION,
                   std::string(Calls::kLibrary) + " reported success but produced no code");
    }
    if (size > kMaxRuntimeCodeSize) {
      fail_compile(HIPACM_ERROR_INTERNAL,
                   call(calls.size_name) + " reported " + std::to_string(size) + " bytes");
    }
    std::vector<std::uint8_t> code(size + 1);  // a spare byte, as for the log
    check((api_.*calls.copy)(program_, reinterpret_cast<char*>(code.data())), calls.copy_name);
    code.resize(size);
    return code;
  }

  std::vector<std::string> lowered_names(const std::vector<std::string>& expressions) const {
    std::vector<std::string> lowered;
    for (const std::string& expression : expressions) {
      const std::string name = "GetLoweredName(\"" + expression + "\")";
      const char* text = nullptr;
      check((api_.*Calls::lowered_name)(program_, expression.c_str(), &text), name);
      if (text == nullptr) fail_compile(HIPACM_ERROR_INTERNAL, call(name) + " gave no name");
      lowered.emplace_back(text);
    }
    return lowered;
  }

  const Table& api_;
  const std::string source_name_;
  Handle program_ = nullptr;
};

/// Accepts `program` into *result, or throws when hipacm's code-object check
/// (compile_result_check.h) rejects it, naming `library` as the compiler that made it.
void accept_compiled(std::string_view library, const CompileRequest& request,
                     CompiledProgram* program, CompileResult* result);

/// Call only inside a catch block: the exception in flight as *result's status and message,
/// keeping the log.
void reject_compiled(CompiledProgram* program, CompileResult* result) noexcept;

/// The end every compile shares: `compile(CompiledProgram*, double* seconds)` checks the request
/// and runs the library, throwing on failure; what it made must then pass the code-object check.
/// The one error path of both libraries' compiles: any exception becomes the result's status and
/// message (failure_from_current_exception), with the log kept. Never throws.
template <class Compile>
CompileResult run_checked_compile(std::string_view library, const CompileRequest& request,
                                  Compile&& compile) noexcept {
  CompileResult result;
  CompiledProgram program;
  try {
    compile(&program, &result.compile_seconds);
    accept_compiled(library, request, &program, &result);
    result.code_checked = true;  // by accept_compiled: no later step in this process repeats it
  } catch (...) {
    reject_compiled(&program, &result);
  }
  return result;
}

/// Loads a library with `load` (its table, or the failure that says why not: a function or a
/// callable that picks the library from the request) and compiles with `compile` against it. A
/// loader that throws leaves the library BACKEND_UNAVAILABLE, with `load_context` ("cannot load
/// hipRTC") before the reason.
template <class Table, class Load>
CompileResult compile_with_loaded(Load load, std::string_view load_context,
                                  CompileResult (*compile)(const Table*, const std::string&,
                                                           const CompileRequest&),
                                  const CompileRequest& request) noexcept {
  std::string load_error;
  const Table* api = nullptr;
  try {
    const Expected<const Table*> loaded = load();
    if (loaded)
      api = loaded.value();
    else
      load_error = loaded.failure().message;
  } catch (...) {
    Failure failure = failure_from_current_exception(load_context);
    CompileResult result;
    result.status = HIPACM_ERROR_BACKEND_UNAVAILABLE;
    result.error_message = std::move(failure.message);
    return result;
  }
  return compile(api, load_error, request);
}

}  // namespace hipacm::backend
