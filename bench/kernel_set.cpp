// kernel_set.cpp - loads the example kernels (with their "// hipacm:" directives) as benchmark
// requests.
#include "kernel_set.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hipacm::bench {
namespace fs = std::filesystem;
namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::vector<KernelSource> load_example_kernels(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".hip")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no .hip files in " + dir);

  std::vector<KernelSource> kernels;
  for (const auto& path : files) {
    KernelSource k;
    k.name = path.filename().string();
    k.source = read_file(path);
    std::istringstream lines(k.source);
    const std::string prefix = "// hipacm: ";
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(prefix, 0) != 0) continue;
      const std::string directive = line.substr(prefix.size());
      const auto eq = directive.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = directive.substr(0, eq), value = directive.substr(eq + 1);
      if (key == "option") {
        k.options.push_back(value);
      } else if (key == "name_expression") {
        k.name_expressions.push_back(value);
      } else if (key == "header") {
        const fs::path header = path.parent_path() / value;
        k.headers.emplace_back(header.filename().string(), read_file(header));
        k.header_dirs.push_back(header.parent_path().string());
      }
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::vector<KernelSource> make_distinct_set(const std::vector<KernelSource>& examples,
                                            std::size_t count) {
  std::vector<KernelSource> out;
  for (std::size_t i = 0; i < count; ++i) {
    KernelSource k = examples[i % examples.size()];
    const std::size_t variant = i / examples.size();
    k.name += "#" + std::to_string(variant);
    k.source = "// variant " + std::to_string(variant) + "\n" + k.source;
    k.options.push_back("-DHIPACM_BENCH_VARIANT=" + std::to_string(variant));
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace hipacm::bench
