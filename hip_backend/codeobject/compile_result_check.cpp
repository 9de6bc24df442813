// SPDX-License-Identifier: MIT
// compile_result_check.cpp - the one acceptance test for a code object claimed to answer a request.
#include "hip_backend/codeobject/compile_result_check.h"

#include "hip_backend/codeobject/code_object_check.h"
#include "hip_backend/codeobject/symbol_check.h"
#include "support/pass_counts.h"

namespace hipacm::backend {

namespace {

// Far beyond any mangled name a real template produces; a longer one is not
// a name the compiler gave but garbage from a forged cache row or frame.
constexpr std::size_t kMaxLoweredNameBytes = 64 * 1024;

}  // namespace

Expected<void> check_compile_result(const CompileRequest& request,
                                    const std::vector<std::uint8_t>& code,
                                    const std::vector<std::string>& lowered_names) {
  count_pass(pass_counts().result_checks);
  if (lowered_names.size() != request.name_expressions.size()) {
    return check_failure(std::to_string(lowered_names.size()) + " lowered name(s) for " +
                         std::to_string(request.name_expressions.size()) +
                         " name expression(s) in the request");
  }
  for (std::size_t i = 0; i < lowered_names.size(); ++i) {
    const std::string& name = lowered_names[i];
    if (name.empty() || name.size() > kMaxLoweredNameBytes ||
        name.find('\0') != std::string::npos) {
      return check_failure("the lowered name of name expression '" + request.name_expressions[i] +
                           "' is empty, oversized or holds a NUL byte");
    }
  }
  // Lowered names are required symbols: a kernel (descriptor or entry) or,
  // for "&var" expressions, a data symbol; the checks accept either.
  return check_code_object(code, request.arch, lowered_names);
}

}  // namespace hipacm::backend
