// SPDX-License-Identifier: MIT
// lowered_name_match.h - whether stored lowered names plausibly answer a request's name
// expressions.
#pragma once

#include <string>
#include <vector>

#include "support/failure.h"

namespace hipacm::cache {

/// Checks each (name expression, lowered name) pair without a compiler: the
/// lowered name is demangled and its qualified name, with template arguments
/// up to the parameter list, is compared with the expression (whitespace,
/// a leading '&' or '::', and a leading cast normalised away).
///
/// A pair fails when the base identifiers differ; when a template argument
/// spelled only with builtin types (float, int, double*, ...) differs from
/// the demangled one; or when the names differ and another lowered name
/// matches this expression exactly (two names swapped). Anything it cannot
/// decide (typedefs, aliases, non-type arguments) passes when the base
/// identifiers match. A refusal is an INVALID_ARGUMENT failure naming the pair.
Expected<void> lowered_names_match(const std::vector<std::string>& name_expressions,
                                   const std::vector<std::string>& lowered_names);

/// The comparable form of one lowered name: its demangled qualified name with
/// template arguments, whitespace-normalised; the name itself when it is not
/// mangled (extern "C" kernels, C variables). Exposed for tests.
std::string comparable_lowered_name(const std::string& lowered_name);

/// The comparable form of one name expression (see lowered_names_match).
std::string comparable_expression(const std::string& expression);

}  // namespace hipacm::cache
