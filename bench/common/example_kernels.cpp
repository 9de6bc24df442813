// SPDX-License-Identifier: MIT
// example_kernels.cpp - reads the example kernels from their directives or a manifest.
#include "bench/common/example_kernels.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hipacm::bench {
namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

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
    k.file = path.filename().string();
    k.source = read_text(path);
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
        k.headers.emplace_back(header.filename().string(), read_text(header));
        k.header_dirs.push_back(header.parent_path().string());
      }
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::vector<KernelSource> read_kernel_manifest(
    const std::string& dir, const char* schema, const char* source_key,
    const std::function<void(const nlohmann::json& entry, KernelSource& kernel)>& read_more) {
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  std::vector<KernelSource> set;
  try {
    const auto manifest = nlohmann::json::parse(read_text(manifest_path));
    if (manifest.value("schema", "") != schema)
      throw std::runtime_error(manifest_path.string() + ": unknown schema");
    for (const auto& entry : manifest.at("kernels")) {
      KernelSource k;
      k.file = entry.at(source_key).get<std::string>();
      k.source = read_text(fs::path(dir) / k.file);
      k.options = entry.at("options").get<std::vector<std::string>>();
      k.name_expressions = entry.at("name_expressions").get<std::vector<std::string>>();
      read_more(entry, k);
      set.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(manifest_path.string() + ": " + e.what());
  }
  if (set.empty()) throw std::runtime_error(manifest_path.string() + ": no kernels");
  return set;
}

std::vector<KernelSource> load_example_manifest(const std::string& dir) {
  return read_kernel_manifest(dir, "hipacm-examples-manifest-1", "source",
                              [&dir](const nlohmann::json& entry, KernelSource& k) {
                                for (const auto& [name, path] : entry.at("headers").items())
                                  k.headers.emplace_back(
                                      name, read_text(fs::path(dir) / path.get<std::string>()));
                                k.functions = entry.at("functions").get<std::vector<std::string>>();
                              });
}

std::vector<KernelSource> make_distinct_set(const std::vector<KernelSource>& examples,
                                            std::size_t count) {
  std::vector<KernelSource> out;
  for (std::size_t i = 0; i < count; ++i) {
    KernelSource k = examples[i % examples.size()];
    // A named index, never a temporary, on the right of a literal: GCC 12 at -O3 reports a false
    // -Wrestrict overlap for `"literal" + std::string&&` (GCC PR 105329).
    const std::string variant = std::to_string(i / examples.size());
    k.file += "@" + variant;  // "#" is not a character source names may use
    k.source = "// variant " + variant + "\n" + k.source;
    k.options.push_back("-DHIPACM_BENCH_VARIANT=" + variant);
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace hipacm::bench
