// example_set.cpp - reads examples/kernels/manifest.json and the sources and headers it names.
#include "example_set.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace hipacm::device {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::vector<ExampleSource> load_example_set(const std::string& dir) {
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(read_text(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(manifest_path.string() + ": " + e.what());
  }
  if (manifest.value("schema", "") != "hipacm-examples-manifest-1")
    throw std::runtime_error(manifest_path.string() + ": unknown schema");

  std::vector<ExampleSource> set;
  try {
    for (const auto& entry : manifest.at("kernels")) {
      ExampleSource k;
      k.file = entry.at("source").get<std::string>();
      k.source = read_text(fs::path(dir) / k.file);
      k.options = entry.at("options").get<std::vector<std::string>>();
      for (const auto& [name, path] : entry.at("headers").items())
        k.headers.emplace_back(name, read_text(fs::path(dir) / path.get<std::string>()));
      k.name_expressions = entry.at("name_expressions").get<std::vector<std::string>>();
      k.functions = entry.at("functions").get<std::vector<std::string>>();
      set.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(manifest_path.string() + ": " + e.what());
  }
  if (set.empty()) throw std::runtime_error(manifest_path.string() + ": no kernels");
  return set;
}

}  // namespace hipacm::device
