// SPDX-License-Identifier: MIT
// warm_examples_check.cpp - every example kernel compiles through hipacm.hpp, each callback once.
#include <hipacm/hipacm.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

/*
 * Usage: hipacm-examples-check --arch ARCH --kernels DIR
 *
 * Submits every .hip file of DIR, in name order, to one mode, as the request its // hipacm:
 * directives describe (kernels/README.md), and checks that each compiled into an ELF code object
 * that defines its extern "C" kernels and lowered names, that finalize ran exactly once per future
 * and cleanup never, and that the mode exited cleanly. Exit status: 0 when all of that holds, 1
 * when anything failed, 2 for a usage or set-up error, 3 when the plugin has no compiler backend
 * (ctest reports the test as skipped).
 */

namespace fs = std::filesystem;

namespace {

struct Example {
  std::string file;  // base name, also hipRTC's source name
  std::vector<std::string> name_expressions;
  std::vector<std::string> functions;  // the extern "C" kernels the source defines
  hipacm::Future future;
  int finalized = 0;
  int cleaned_up = 0;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.good() && !in.eof()) throw std::runtime_error("cannot read " + path.string());
  return text;
}

// The request of one example: its source, under its base name, plus the directives of the
// leading // block. Also notes what the code object must define.
hipacm::Request make_request(const fs::path& dir, Example& ex) {
  static const std::regex marked(R"(//[ \t]*hipacm:.*)");
  static const std::regex directive(
      R"(//[ \t]*hipacm:[ \t]*(option|header|name_expression)=(.+?)[ \t\r]*)");
  static const std::regex function(R"(extern "C" __global__ void ([A-Za-z0-9_]+)\()");
  const std::string source = read_text(dir / ex.file);
  hipacm::Request request(source);
  request.name(ex.file);
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line) && line.rfind("//", 0) == 0;) {
    std::smatch m;
    if (!std::regex_match(line, marked)) continue;
    if (!std::regex_match(line, m, directive))
      throw std::runtime_error(ex.file + ": bad directive '" + line + "'");
    const std::string key = m[1], value = m[2];
    if (key == "option") {
      request.option(value);
    } else if (key == "name_expression") {
      request.name_expression(value);
      ex.name_expressions.push_back(value);
    } else {
      request.header(fs::path(value).filename().string(), read_text(dir / value));
    }
  }
  for (std::sregex_iterator it(source.begin(), source.end(), function), end; it != end; ++it)
    ex.functions.push_back((*it)[1]);
  return request;
}

bool defines(const hipacm_kernel& k, const std::string& name) {
  for (std::size_t i = 0; i < k.num_functions; ++i)
    if (k.function_names[i] != nullptr && name == k.function_names[i]) return true;
  return false;
}

// Why a compiled example is wrong, or "" when it is right.
std::string problem(const Example& ex, const hipacm_kernel& k) {
  if (k.code == nullptr || k.code_size < 64 || std::memcmp(k.code, "\177ELF", 4) != 0)
    return "no ELF code object";
  if (k.num_lowered_names != ex.name_expressions.size())
    return std::to_string(k.num_lowered_names) + " lowered names, want " +
           std::to_string(ex.name_expressions.size());
  std::vector<std::string> wanted = ex.functions;
  for (const auto name : hipacm::lowered_names(k)) wanted.emplace_back(name);
  for (const auto& name : wanted)
    if (!defines(k, name)) return "the code object lacks kernel " + name;
  if (ex.finalized != 1 || ex.cleaned_up != 0)
    return "finalize ran " + std::to_string(ex.finalized) + " times, cleanup " +
           std::to_string(ex.cleaned_up);
  return "";
}

std::vector<Example> list_examples(const fs::path& dir) {
  std::vector<Example> examples;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".hip") examples.emplace_back().file = entry.path().filename();
  std::sort(examples.begin(), examples.end(),
            [](const Example& a, const Example& b) { return a.file < b.file; });
  if (examples.empty()) throw std::runtime_error("no *.hip files in " + dir.string());
  return examples;
}

// Compiles every example in one mode; returns how many failed.
int check(const std::string& arch, const fs::path& dir) {
  std::vector<Example> examples = list_examples(dir);  // never resized: callbacks point into it
  std::vector<hipacm::Request> requests;
  for (auto& ex : examples) requests.push_back(make_request(dir, ex));

  hipacm::Mode mode(hipacm::Config().arch(arch));
  for (std::size_t i = 0; i < examples.size(); ++i) {
    Example* ex = &examples[i];
    requests[i]
        .finalize([ex](const hipacm_kernel&) { ++ex->finalized; })
        .cleanup([ex](const hipacm::Error&) { ++ex->cleaned_up; });
    ex->future = mode.submit(requests[i]);
  }
  int failures = 0;
  try {
    mode.exit();
  } catch (const hipacm::CompileError& e) {
    std::printf("mode exit: %s\n", e.what());
    ++failures;
  }

  std::printf("%-20s %9s %7s %5s %10s\n", "KERNEL FILE", "CODE(B)", "KERNELS", "NAMES",
              "COMPILE(s)");
  for (const auto& ex : examples) {
    try {
      const hipacm_kernel& k = ex.future.result();
      const std::string why = problem(ex, k);
      std::printf("%-20s %9zu %7zu %5zu %10.3f\n", ex.file.c_str(), k.code_size, k.num_functions,
                  k.num_lowered_names, k.compile_seconds);
      if (!why.empty()) std::printf("    FAILED: %s\n", why.c_str());
      failures += why.empty() ? 0 : 1;
    } catch (const hipacm::Error& e) {
      std::printf("%-20s FAILED: %s\n%s\n", ex.file.c_str(), e.what(), e.log().c_str());
      ++failures;
    }
  }
  std::printf("\n%zu kernel files for %s, %d failed\n", examples.size(), arch.c_str(), failures);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  std::string arch;
  fs::path dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--arch") == 0) arch = argv[i + 1];
    if (std::strcmp(argv[i], "--kernels") == 0) dir = argv[i + 1];
  }
  if (arch.empty() || dir.empty() || argc != 5) {
    std::fprintf(stderr, "usage: hipacm-examples-check --arch ARCH --kernels DIR\n");
    return 2;
  }
  try {
    return check(arch, dir) == 0 ? 0 : 1;
  } catch (const hipacm::Error& e) {
    std::fprintf(stderr, "hipacm-examples-check: %s\n", e.what());
    return e.status() == hipacm::Status::BackendUnavailable ? 3 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hipacm-examples-check: %s\n", e.what());
    return 2;
  }
}
