// SPDX-License-Identifier: MIT
// lowered_name_match.cpp - whether stored lowered names plausibly answer a request's name
// expressions.
#include "plugin/cache/lowered_name_match.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace hipacm::cache {
namespace {

// Far longer than any real mangled name; longer input is not demangled (the
// demangler's work grows with it) and is compared as it is.
constexpr std::size_t kMaxDemangleInput = 16 * 1024;

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Drops whitespace, except one space between two identifier characters
// ("unsigned int" stays, "T<int> >" becomes "T<int>>").
std::string normalize_space(std::string_view s) {
  std::string out;
  bool pending_space = false;
  for (char c : s) {
    if (is_space(c)) {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty() && is_identifier_char(out.back()) && is_identifier_char(c))
      out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// The index just past the group that opens at s[open] (an '(' or '<'),
// or npos when it is not closed.
std::size_t skip_group(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '<') ++depth;
    if (s[i] == ')' || s[i] == '>') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

// Where the last '::'-separated component of a qualified name starts.
std::size_t last_component_start(std::string_view s) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (depth == 0 && s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':') start = i + 2;
  }
  return start;
}

std::string base_identifier(std::string_view s) {
  std::string_view component = s.substr(last_component_start(s));
  return std::string(component.substr(0, component.find('<')));
}

// The top-level template arguments of the last component ("f<a,b<c>>" gives
// {"a", "b<c>"}); empty when it has none or they are not balanced.
std::vector<std::string> template_arguments(std::string_view s) {
  std::string_view component = s.substr(last_component_start(s));
  const std::size_t open = component.find('<');
  if (open == std::string_view::npos) return {};
  const std::size_t end = skip_group(component, open);
  if (end == std::string_view::npos) return {};
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = open + 1;
  for (std::size_t i = open + 1; i + 1 < end; ++i) {
    if (component[i] == '<' || component[i] == '(') ++depth;
    if (component[i] == '>' || component[i] == ')') --depth;
    if (depth == 0 && component[i] == ',') {
      out.emplace_back(component.substr(start, i - start));
      start = i + 1;
    }
  }
  out.emplace_back(component.substr(start, end - 1 - start));
  return out;
}

// A template argument spelled only with builtin type keywords and '*' means
// the same type in the expression and in the demangled name: no typedef can
// hide behind it, so a difference is a real difference.
bool spelled_with_builtins_only(std::string_view arg) {
  static constexpr std::string_view kBuiltins[] = {"float", "double", "bool",
                                                   "int",   "char",   "void"};
  std::size_t i = 0;
  while (i < arg.size()) {
    if (arg[i] == '*') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < arg.size() && is_identifier_char(arg[end])) ++end;
    if (end == i) return false;
    bool builtin = false;
    for (std::string_view word : kBuiltins) builtin = builtin || arg.substr(i, end - i) == word;
    if (!builtin) return false;
    i = end;
  }
  return !arg.empty();
}

// Whether the template arguments of the two names provably differ.
bool arguments_differ(std::string_view expression, std::string_view lowered) {
  const std::vector<std::string> wanted = template_arguments(expression);
  const std::vector<std::string> found = template_arguments(lowered);
  // Extra arguments in the lowered name are defaults the expression left out.
  for (std::size_t i = 0; i < wanted.size() && i < found.size(); ++i) {
    if (spelled_with_builtins_only(wanted[i]) && spelled_with_builtins_only(found[i]) &&
        wanted[i] != found[i])
      return true;
  }
  return false;
}

struct FreeDeleter {
  void operator()(char* p) const noexcept { std::free(p); }
};

}  // namespace

std::string comparable_expression(const std::string& expression) {
  std::string s = normalize_space(expression);
  for (bool changed = true; changed && !s.empty();) {
    changed = false;
    if (s.front() == '&') {
      s.erase(0, 1);
      changed = true;
    } else if (s.rfind("::", 0) == 0) {
      s.erase(0, 2);
      changed = true;
    } else if (s.front() == '(') {
      // A cast that picks an overload: "(void(*)(float*))&f".
      const std::size_t end = skip_group(s, 0);
      if (end == std::string::npos || end == s.size()) break;
      s.erase(0, end);
      changed = true;
    }
  }
  return s;
}

std::string comparable_lowered_name(const std::string& lowered_name) {
  if (lowered_name.size() > kMaxDemangleInput || lowered_name.rfind("_Z", 0) != 0)
    return lowered_name;
  int status = 0;
  std::unique_ptr<char, FreeDeleter> demangled(
      abi::__cxa_demangle(lowered_name.c_str(), nullptr, nullptr, &status));
  if (status != 0 || !demangled) return lowered_name;
  std::string s = normalize_space(demangled.get());
  // "void ns::f<float>(float*,int)": drop the parameter list, then the
  // return type (everything up to the last top-level space).
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  int depth = 0;
  std::size_t name_start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (depth == 0 && s[i] == ' ') name_start = i + 1;
  }
  return s.substr(name_start);
}

Expected<void> lowered_names_match(const std::vector<std::string>& name_expressions,
                                   const std::vector<std::string>& lowered_names) {
  if (name_expressions.size() != lowered_names.size()) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                   std::to_string(lowered_names.size()) + " lowered name(s) for " +
                       std::to_string(name_expressions.size()) + " name expression(s)"};
  }
  std::vector<std::string> lowered;
  lowered.reserve(lowered_names.size());
  for (const auto& name : lowered_names) lowered.push_back(comparable_lowered_name(name));
  for (std::size_t i = 0; i < name_expressions.size(); ++i) {
    const std::string expression = comparable_expression(name_expressions[i]);
    if (expression == lowered[i]) continue;
    const auto mismatch = [&](const std::string& why) {
      return Failure{HIPACM_ERROR_INVALID_ARGUMENT,
                     "lowered name '" + lowered_names[i] + "' (" + lowered[i] +
                         ") does not answer name expression '" + name_expressions[i] + "': " + why};
    };
    if (base_identifier(expression) != base_identifier(lowered[i]))
      return mismatch("it names another function or variable");
    if (arguments_differ(expression, lowered[i])) return mismatch("its template arguments differ");
    for (std::size_t j = 0; j < lowered.size(); ++j)
      if (j != i && lowered[j] == expression)
        return mismatch("another lowered name of the entry matches it exactly");
  }
  return {};
}

}  // namespace hipacm::cache
