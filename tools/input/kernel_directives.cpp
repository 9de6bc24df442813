// SPDX-License-Identifier: MIT
// kernel_directives.cpp - parses the leading "// hipacm: key=value" block of a .hip file.
#include "tools/input/kernel_directives.h"

#include <fmt/core.h>

#include <sstream>
#include <string_view>

#include "tools/common/exit_codes.h"
#include "tools/input/input_files.h"
#include "tools/input/kernel_input.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "hipacm:";

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

void apply_directive(const fs::path& file, std::string_view text, KernelInput* kernel) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos)
    throw InputError(fmt::format("{}: directive '{}' has no '='", file.string(), text));
  const std::string_view key = text.substr(0, eq);
  const std::string value(text.substr(eq + 1));
  if (value.empty())
    throw InputError(fmt::format("{}: directive '{}' has an empty value", file.string(), text));
  if (key == "option") {
    kernel->options.push_back(value);
  } else if (key == "name_expression") {
    kernel->name_expressions.push_back(value);
  } else if (key == "header") {
    const fs::path header = file.parent_path() / value;
    if (header.filename().empty())
      throw InputError(fmt::format("{}: header '{}' has no file name", file.string(), value));
    kernel->headers.emplace_back(header.filename().string(), read_source_file(header));
  } else {
    throw InputError(
        fmt::format("{}: unknown directive key '{}' (want option, header or name_expression)",
                    file.string(), key));
  }
}

}  // namespace

KernelInput read_kernel_file(const fs::path& file) {
  KernelInput kernel;
  kernel.path = file.string();
  kernel.origin = file.string() + " (an `// hipacm: option=` directive)";
  kernel.source_name = compiler_source_name(file.filename().string());
  kernel.source = read_source_file(file);
  std::istringstream lines(kernel.source);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("//", 0) != 0) break;  // the block ends at the first non-// line
    const std::string_view text = trim(std::string_view(line).substr(2));
    if (text.substr(0, kPrefix.size()) != kPrefix) continue;
    apply_directive(file, trim(text.substr(kPrefix.size())), &kernel);
  }
  return kernel;
}

}  // namespace hipacm::cli
