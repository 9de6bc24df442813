// SPDX-License-Identifier: MIT
// fuzz_nvrtc_program_name.cpp - fuzz target: a CUDA program named by a path
// (name_without_directory) and its log given the program's name back (with_program_name).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "plugin/abi/nvrtc_program_name.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using hipacm::fuzz::invariant_broken;

constexpr std::uint8_t kMaxHeaders = 4;
// What makes a program keep its name (nvrtc_program_name.cpp's list).
constexpr std::string_view kNameReaders[] = {"__FILE__", "__FILE_NAME__", "__builtin_FILE", "#line",
                                             "assert"};

bool has_reader(std::string_view text) {
  for (std::string_view reader : kNameReaders)
    if (text.find(reader) != std::string_view::npos) return true;
  return false;
}

void check_stripped_name(const hipacm::backend::CompileRequest& request) {
  const std::string file = hipacm::name_without_directory(request);
  if (file.empty()) return;
  const std::size_t slash = request.source_name.rfind('/');
  if (slash == std::string::npos || request.source_name.substr(slash + 1) != file)
    invariant_broken("a program's name was replaced by something else than its file's name");
  if (has_reader(request.source))
    invariant_broken("a program whose source reads its name lost its directory");
  for (const auto& [name, text] : request.headers) {
    if (name == file) invariant_broken("a program lost its directory to a header's name");
    if (has_reader(text)) invariant_broken("a program whose header reads its name lost it");
  }
  hipacm::backend::CompileRequest again = request;
  again.source_name = file;
  if (!hipacm::name_without_directory(again).empty())
    invariant_broken("a name with no directory was shortened again");
}

std::size_t lines_of(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

void check_log(const std::string& log, const std::string& compiled, const std::string& program) {
  if (hipacm::with_program_name(log, compiled, compiled) != log)
    invariant_broken("a log was changed by giving it the name it already has");
  const std::string out = hipacm::with_program_name(log, compiled, program);
  const bool one_line_names =
      compiled.find('\n') == std::string::npos && program.find('\n') == std::string::npos;
  if (one_line_names && lines_of(out) != lines_of(log))
    invariant_broken("giving a log the program's name changed its line count");
  // At most three places a line (its start, its end, the closing summary), each growing by the
  // difference of the names.
  const std::size_t growth =
      program.size() > compiled.size() ? program.size() - compiled.size() : 0;
  if (out.size() > log.size() + lines_of(log) * 3 * growth)
    invariant_broken("giving a log the program's name grew it beyond its bound");
  if (!compiled.empty() && log.find(compiled) == std::string::npos && out != log)
    invariant_broken("a log that never names the compiled program was changed");
}

}  // namespace

// Layout: the header count, the program's name, its source, the headers (name, text), the name it
// was compiled under, the name to give back, then the log (the rest of the input).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  hipacm::fuzz::FuzzInput in(data, size);
  const std::uint8_t header_count = in.u8() % (kMaxHeaders + 1);
  hipacm::backend::CompileRequest request;
  request.arch = "sm_90";
  request.source_name = in.str();
  request.source = in.str();
  for (std::uint8_t i = 0; i < header_count; ++i) {
    std::string name = in.str();
    std::string text = in.str();
    request.headers.emplace_back(std::move(name), std::move(text));
  }
  const std::string compiled = in.str();
  const std::string program = in.str();
  const std::vector<std::uint8_t> rest = in.rest();
  const std::string log(rest.begin(), rest.end());

  check_stripped_name(request);
  check_log(log, compiled, program);
  return 0;
}
