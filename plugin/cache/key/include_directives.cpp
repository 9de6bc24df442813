// SPDX-License-Identifier: MIT
// include_directives.cpp - a lexical scan for include directives, without preprocessing.
#include "plugin/cache/key/include_directives.h"

namespace hipacm::cache::input_scan {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r'; }
bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Skips blanks and /* */ comments inside one logical line.
std::size_t skip_blanks(std::string_view line, std::size_t at) {
  while (at < line.size()) {
    if (is_space(line[at])) {
      ++at;
    } else if (line.compare(at, 2, "/*") == 0) {
      const std::size_t end = line.find("*/", at + 2);
      at = end == std::string_view::npos ? line.size() : end + 2;
    } else {
      break;
    }
  }
  return at;
}

// Reads `"name"` or `<name>` at `at`; anything else is a computed name.
IncludeName read_header_name(std::string_view line, std::size_t at) {
  at = skip_blanks(line, at);
  if (at < line.size() && (line[at] == '"' || line[at] == '<')) {
    const char close = line[at] == '"' ? '"' : '>';
    const std::size_t end = line.find(close, at + 1);
    if (end != std::string_view::npos && end > at + 1)
      return {std::string(line.substr(at + 1, end - at - 1)), false};
  }
  return {"", true};
}

// One logical line: backslash-newline continuations joined.
void scan_logical_line(std::string_view line, std::vector<IncludeName>* out) {
  std::size_t at = skip_blanks(line, 0);
  std::size_t after_hash = std::string_view::npos;
  if (line.compare(at, 1, "#") == 0) after_hash = at + 1;
  if (line.compare(at, 2, "%:") == 0 || line.compare(at, 3, "?\?=") == 0)
    after_hash = at + (line[at] == '%' ? 2 : 3);
  if (after_hash != std::string_view::npos) {
    std::size_t word = skip_blanks(line, after_hash);
    std::size_t end = word;
    while (end < line.size() && is_identifier_char(line[end])) ++end;
    const std::string_view directive = line.substr(word, end - word);
    if (directive == "include" || directive == "include_next" || directive == "import") {
      IncludeName name = read_header_name(line, end);
      // `#include` with nothing after it is an error the compiler reports.
      if (!name.computed || skip_blanks(line, end) < line.size()) out->push_back(std::move(name));
    }
  }
  static constexpr std::string_view kHasInclude = "__has_include";
  for (std::size_t found = line.find(kHasInclude); found != std::string_view::npos;
       found = line.find(kHasInclude, found + kHasInclude.size())) {
    std::size_t next = found + kHasInclude.size();
    if (line.compare(next, 5, "_next") == 0) next += 5;
    if (next < line.size() && is_identifier_char(line[next])) continue;
    next = skip_blanks(line, next);
    if (next >= line.size() || line[next] != '(') continue;  // `#ifdef __has_include`
    out->push_back(read_header_name(line, next + 1));
  }
}

}  // namespace

std::vector<IncludeName> include_names(std::string_view text) {
  std::vector<IncludeName> out;
  // Only lines that can hold a directive are assembled; most are skipped by
  // the cheap test below.
  std::string logical;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view physical = text.substr(at, end - at);
    at = end + 1;
    if (!physical.empty() && physical.back() == '\r') physical.remove_suffix(1);
    if (!physical.empty() && physical.back() == '\\') {
      logical.append(physical.substr(0, physical.size() - 1));
      continue;
    }
    if (logical.empty()) {
      if (physical.find("include") != std::string_view::npos ||
          physical.find("import") != std::string_view::npos)
        scan_logical_line(physical, &out);
    } else {
      logical.append(physical);
      scan_logical_line(logical, &out);
      logical.clear();
    }
  }
  if (!logical.empty()) scan_logical_line(logical, &out);
  return out;
}

}  // namespace hipacm::cache::input_scan
