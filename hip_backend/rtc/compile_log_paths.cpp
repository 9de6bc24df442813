// SPDX-License-Identifier: MIT
// compile_log_paths.cpp - rewrites comgr's temporary source and header paths in compiler logs.
#include "hip_backend/rtc/compile_log_paths.h"

namespace hipacm::backend {
namespace {

constexpr std::string_view kComgrDir = "/comgr-";
constexpr std::string_view kMainSource = "/input/CompileSource";
constexpr std::string_view kInputDir = "/input/";
constexpr std::string_view kHeaderDir = "/include/";

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A path in a diagnostic starts after a blank or an opening quote or bracket.
bool ends_path(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '(' ||
         c == '<' || c == '`';
}

// Whether `rest` starts with `dir` followed by a file name (kept in the log).
bool names_a_file_in(std::string_view rest, std::string_view dir) {
  return rest.substr(0, dir.size()) == dir && rest.size() > dir.size() &&
         !ends_path(rest[dir.size()]) && rest[dir.size()] != ':';
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
    while (start > copied && !ends_path(log[start - 1])) --start;
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
    if (rest.substr(0, kMainSource.size()) == kMainSource &&
        (rest.size() == kMainSource.size() || !is_alnum(rest[kMainSource.size()]))) {
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

}  // namespace hipacm::backend
