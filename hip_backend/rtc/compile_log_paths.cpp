// SPDX-License-Identifier: MIT
// compile_log_paths.cpp - rewrites comgr's temporary source and header paths in compiler logs to
// the request's names, and those names back to the paths a program's own comgr would print.
#include "hip_backend/rtc/compile_log_paths.h"

#include <unistd.h>

#include <optional>
#include <random>

#include "support/environment.h"

namespace hipacm::backend {
namespace {

constexpr std::string_view kComgrDir = "/comgr-";
constexpr std::string_view kMainSource = "/input/CompileSource";
constexpr std::string_view kInputDir = "/input/";
constexpr std::string_view kHeaderDir = "/include/";

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A path in a diagnostic starts after a blank or an opening quote or bracket.
bool ends_path(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '(' ||
         c == '<' || c == '`';
}

// Whether a path may start at log[at], after `from` (where the last rewrite ended): both
// directions find paths only there.
bool path_may_start_at(std::string_view log, std::size_t at, std::size_t from) {
  return at == from || ends_path(log[at - 1]);
}

// Whether `rest` starts with `dir` followed by a file name (kept in the log).
bool names_a_file_in(std::string_view rest, std::string_view dir) {
  return rest.substr(0, dir.size()) == dir && rest.size() > dir.size() &&
         !ends_path(rest[dir.size()]) && rest[dir.size()] != ':';
}

// Whether the main source's path ends where `rest` starts with ROCm 5's input/CompileSource.
// ROCm 5's main source is exactly "input/CompileSource": what follows ends the path (a ':' before
// the line, a blank, a quote). A newer comgr's "input/CompileSource.hip" names a source of that
// name, which the input/ rule keeps.
bool is_main_source(std::string_view rest) {
  if (rest.substr(0, kMainSource.size()) != kMainSource) return false;
  if (rest.size() == kMainSource.size()) return true;
  const char next = rest[kMainSource.size()];
  return next == ':' || ends_path(next);
}

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

// The digits at text[at...] and where they end (`at` when there are none).
std::size_t skip_digits(std::string_view text, std::size_t at) {
  while (at < text.size() && is_digit(text[at])) ++at;
  return at;
}

// Whether `name` stands at log[at] where clang prints a file: a diagnostic's "NAME:L:C: " at the
// start of a line, "In file included from NAME:L:", and an unnamed type's "(lambda at NAME:L:C)".
// A name in a message or a source line ("#error k.hip:1") is none of those.
bool names_file_at(std::string_view log, std::size_t at, std::string_view name) {
  if (name.empty() || log.substr(at, name.size()) != name) return false;
  const std::size_t line = at + name.size() + 1;
  const std::size_t line_end = skip_digits(log, line);
  if (line >= log.size() || log[line - 1] != ':' || line_end == line) return false;
  const std::string_view before = log.substr(0, at);
  if (before.empty() || before.back() == '\n' || ends_with(before, "In file included from "))
    return true;
  const std::size_t column_end = skip_digits(log, line_end + 1);
  return ends_with(before, " at ") && line_end < log.size() && log[line_end] == ':' &&
         column_end > line_end + 1 && column_end < log.size() && log[column_end] == ')';
}

}  // namespace

std::string with_request_file_names(std::string_view log, std::string_view source_name) {
  std::string out;
  out.reserve(log.size());
  std::size_t copied = 0;  // log[0, copied) is in `out`
  for (std::size_t at = log.find(kComgrDir); at != std::string_view::npos;
       at = log.find(kComgrDir, at + 1)) {
    if (at < copied) continue;
    std::size_t start = at;
    while (!path_may_start_at(log, start, copied)) --start;
    // Only an absolute path without a ':' (which would be a file:line before it) is comgr's.
    const std::string_view prefix = log.substr(start, at - start);
    if (log[start] != '/' || prefix.find(':') != std::string_view::npos) continue;
    std::size_t end = at + kComgrDir.size();
    const std::size_t id_start = end;
    // ROCm 5 and 6 name the directory comgr-XXXXXX, ROCm 7 comgr-PID-N-XXXXXX.
    while (end < log.size() && (is_alnum(log[end]) || log[end] == '-')) ++end;
    if (end == id_start) continue;
    const std::string_view rest = log.substr(end);
    std::string_view replacement;
    if (is_main_source(rest)) {
      replacement = source_name;
      end += kMainSource.size();
    } else if (names_a_file_in(rest, kHeaderDir)) {
      end += kHeaderDir.size();  // the header's own name follows and is kept
    } else if (names_a_file_in(rest, kInputDir)) {
      end += kInputDir.size();  // newer comgr keeps the source's own name under input/
    } else {
      continue;
    }
    out.append(log.substr(copied, start - copied));
    out.append(replacement);
    copied = end;
  }
  out.append(log.substr(copied));
  return out;
}

bool comgr_shape_of_release(std::string_view release, ComgrShape* shape) {
  constexpr std::string_view kRocm = "ROCm ";
  if (release.substr(0, kRocm.size()) == kRocm) release.remove_prefix(kRocm.size());
  const std::string_view major = release.substr(0, release.find('.'));
  if (major == "5") {
    *shape = ComgrShape::kRocm5;
  } else if (major == "6") {
    *shape = ComgrShape::kRocm6;
  } else if (major == "7") {
    *shape = ComgrShape::kRocm7;
  } else {
    return false;
  }
  return true;
}

std::string program_comgr_directory(ComgrShape shape, unsigned counter) {
  // LLVM's system_temp_directory: the first of these that is set, even when empty (comgr's
  // directory is then relative), else /tmp; sys::path::append adds a '/' only where none is.
  std::string dir = "/tmp";
  for (const char* variable : {"TMPDIR", "TMP", "TEMP", "TEMPDIR"}) {
    if (const std::optional<std::string> value = compiler_visible_value(variable)) {
      dir = *value;
      break;
    }
  }
  if (!dir.empty() && dir.back() != '/') dir += '/';
  dir += kComgrDir.substr(1);
  if (shape == ComgrShape::kRocm7)
    dir += std::to_string(getpid()) + "-" + std::to_string(counter) + "-";
  // LLVM's createUniqueEntity: each '%' of "-%%%%%%" becomes one random lowercase hex digit.
  thread_local std::mt19937 random{std::random_device{}()};
  for (int i = 0; i < 6; ++i) dir += "0123456789abcdef"[random() & 15];
  return dir;
}

std::string with_comgr_file_names(std::string_view log, std::string_view source_name,
                                  const std::vector<std::string>& header_names,
                                  std::string_view comgr_directory, ComgrShape shape) {
  const std::string dir(comgr_directory);
  const std::string source_path = shape == ComgrShape::kRocm5
                                      ? dir + std::string(kMainSource)
                                      : dir + std::string(kInputDir) + std::string(source_name);
  std::string out;
  out.reserve(log.size() + 64);
  std::size_t copied = 0;  // log[0, copied) is in `out`
  for (std::size_t at = 0; at < log.size(); ++at) {
    if (!path_may_start_at(log, at, copied)) continue;
    // The longest name that stands here (a header "a.h" and one "a.h.inc" both may); the
    // source first, as the forward rewrite gives it that name whatever the headers are called.
    std::string_view name;
    std::string path;
    if (names_file_at(log, at, source_name)) {
      name = source_name;
      path = source_path;
    }
    for (const std::string& header : header_names) {
      if (header.size() > name.size() && names_file_at(log, at, header)) {
        name = header;
        path = dir + std::string(kHeaderDir) + header;
      }
    }
    if (name.empty()) continue;
    out.append(log.substr(copied, at - copied));
    out.append(path);
    copied = at + name.size();
    at = copied - 1;
  }
  out.append(log.substr(copied));
  return out;
}

}  // namespace hipacm::backend
