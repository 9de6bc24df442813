// SPDX-License-Identifier: MIT
// compiler_environment.h - the environment variables the compilers read on their own: captured in
// the host with each request, keyed, and set in the worker that compiles it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/failure.h"

namespace hipacm::backend {

/// How a variable the compiler reads takes part in a compile's key.
enum class CompilerVariableUse {
  kIncludePath,  ///< a ':'-separated list of include directories, searched after -I (CPATH...)
  kKeyed,        ///< a value that changes what is compiled, keyed as it is (ROCM_PATH...)
  kOpaque,       ///< the compiler reads input through it that no key can see: never cached
};

struct CompilerVariable {
  std::string_view name;
  CompilerVariableUse use;
};

/// Every variable hipacm knows the compilers' drivers to read. A request carries each of them.
const std::vector<CompilerVariable>& compiler_variables();

/// The use of `name`, or nullptr when it is not one of compiler_variables().
const CompilerVariable* find_compiler_variable(std::string_view name);

/// This process's values of compiler_variables(), in their order: "NAME=VALUE" where it is set
/// (empty values included) and "NAME" where it is not. Relative and empty entries of include
/// lists are made absolute against the working directory, since workers compile elsewhere. What
/// CompileRequest::environment holds.
std::vector<std::string> capture_compiler_environment();

/// Makes `environment` (as capture_compiler_environment() writes it) this process's: sets or
/// unsets each variable. Only for single-threaded worker processes (setenv is not thread-safe).
/// A failure (INVALID_ARGUMENT) for an entry that names no compiler variable or repeats one;
/// nothing is changed then.
Expected<void> apply_compiler_environment(const std::vector<std::string>& environment);

}  // namespace hipacm::backend
