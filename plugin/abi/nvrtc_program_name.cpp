// SPDX-License-Identifier: MIT
// nvrtc_program_name.cpp - a CUDA program named by a path, compiled under its file's name alone.
#include "plugin/abi/nvrtc_program_name.h"

#include <string_view>

#include "plugin/cache/key/include_directives.h"

namespace hipacm {
namespace {

// What makes a program's code depend on its name: the name as a string, a line directive that
// names a file, and assert, whose message holds __FILE__.
constexpr std::string_view kNameReaders[] = {"__FILE__", "__FILE_NAME__", "__builtin_FILE", "#line",
                                             "assert"};

bool reads_its_name(std::string_view text, const backend::CompileRequest& request) {
  for (std::string_view reader : kNameReaders)
    if (text.find(reader) != std::string_view::npos) return true;
  for (const cache::input_scan::IncludeName& include : cache::input_scan::include_names(text)) {
    if (include.computed) return true;
    bool given = false;
    for (const auto& header : request.headers) given = given || header.first == include.name;
    if (!given) return true;
  }
  return false;
}

}  // namespace

std::string name_without_directory(const backend::CompileRequest& request) {
  const std::size_t slash = request.source_name.rfind('/');
  if (slash == std::string::npos || slash + 1 >= request.source_name.size()) return "";
  const std::string file = request.source_name.substr(slash + 1);
  if (reads_its_name(request.source, request)) return "";
  for (const auto& [name, text] : request.headers)
    if (name == file || reads_its_name(text, request)) return "";
  return file;
}

std::string with_program_name(const std::string& log, const std::string& compiled_name,
                              const std::string& program_name) {
  const std::string at_start = compiled_name + "(";
  const std::string at_end = " of " + compiled_name;
  const std::string quoted = "compilation of \"" + compiled_name + "\".";
  std::string out;
  out.reserve(log.size());
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    if (line.compare(0, at_start.size(), at_start) == 0)
      line = program_name + line.substr(compiled_name.size());
    if (line.size() >= at_end.size() &&
        line.compare(line.size() - at_end.size(), at_end.size(), at_end) == 0)
      line = line.substr(0, line.size() - compiled_name.size()) + program_name;
    if (const std::size_t at = line.find(quoted); at != std::string::npos)
      line = line.substr(0, at) + "compilation of \"" + program_name + "\"." +
             line.substr(at + quoted.size());
    out += line;
    if (end < log.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace hipacm
