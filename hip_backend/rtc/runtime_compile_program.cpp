// SPDX-License-Identifier: MIT
// runtime_compile_program.cpp - the request checks, result mapping and error path that the hipRTC
// and NVRTC compiles share.
#include "hip_backend/rtc/runtime_compile_program.h"

#include <climits>
#include <unordered_map>

#include "hip_backend/codeobject/compile_result_check.h"
#include "support/status_error.h"

namespace hipacm::backend {

hipacm_status runtime_compile_status(int result) {
  switch (result) {
    case kRtcErrorOutOfMemory:
      return HIPACM_ERROR_OUT_OF_MEMORY;
    case kRtcErrorInvalidInput:  // e.g. an empty header name or name expression
      return HIPACM_ERROR_INVALID_ARGUMENT;
    case kRtcErrorCompilation:
    case kRtcErrorInvalidOption:
    case kRtcErrorBuiltinOperationFailure:
    case kRtcErrorNameExpressionNotValid:
      return HIPACM_ERROR_COMPILATION;
    default:
      return HIPACM_ERROR_INTERNAL;
  }
}

void fail_compile(hipacm_status status, std::string message) { throw StatusError(status, message); }

void require_no_nul(const std::string& text, const std::string& what) {
  const std::size_t at = text.find('\0');
  if (at != std::string::npos) {
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT,
                 what + " contains a NUL byte at offset " + std::to_string(at));
  }
}

void check_request_text(const CompileRequest& request, bool allow_empty_source) {
  if (request.source.empty() && !allow_empty_source)
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "the source is empty");
  require_no_nul(request.source, "source");
  require_no_nul(request.source_name, "source name");
  for (const std::string& option : request.options) require_no_nul(option, "option");
  for (const auto& [name, text] : request.headers) {
    if (name.empty()) fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "a header has an empty name");
    require_no_nul(name, "header name");
    require_no_nul(text, "header '" + name + "'");
  }
}

void check_request_counts(const CompileRequest& request, std::size_t extra_headers,
                          std::size_t extra_options) {
  constexpr std::size_t kMax = INT_MAX;
  if (request.headers.size() > kMax - extra_headers ||
      request.options.size() > kMax - extra_options) {
    fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "too many headers or options");
  }
}

NameExpressions::NameExpressions(const std::vector<std::string>& requested) {
  std::unordered_map<std::string, std::size_t> index;
  for (const std::string& expression : requested) {
    if (expression.empty()) {
      fail_compile(HIPACM_ERROR_INVALID_ARGUMENT, "a name expression is empty");
    }
    require_no_nul(expression, "name expression");
    const auto [at, added] = index.emplace(expression, unique_.size());
    if (added) unique_.push_back(expression);
    order_.push_back(at->second);
  }
}

std::vector<std::string> NameExpressions::in_request_order(
    const std::vector<std::string>& lowered) const {
  std::vector<std::string> out;
  out.reserve(order_.size());
  for (std::size_t index : order_) out.push_back(lowered.at(index));
  return out;
}

ProgramHeaders::ProgramHeaders(const CompileRequest& request) {
  for (const auto& [name, text] : request.headers) add(name.c_str(), text.c_str());
}

void accept_compiled(std::string_view library, const CompileRequest& request,
                     CompiledProgram* program, CompileResult* result) {
  if (const Expected<void> checked =
          check_compile_result(request, program->code, program->lowered_names);
      !checked) {
    fail_compile(HIPACM_ERROR_COMPILATION,
                 std::string(library) +
                     " reported success, but hipacm's code-object check rejected its output: " +
                     checked.failure().message);
  }
  result->status = HIPACM_SUCCESS;
  result->log = std::move(program->log);
  result->code = std::move(program->code);
  result->lowered_names = std::move(program->lowered_names);
}

void reject_compiled(CompiledProgram* program, CompileResult* result) noexcept {
  Failure failure = failure_from_current_exception();
  result->status = failure.status;
  result->error_message = std::move(failure.message);
  result->log = std::move(program->log);
  result->code.clear();
  result->lowered_names.clear();
}

}  // namespace hipacm::backend
