// manifest_reader.cpp - turns a hipacm-examples-manifest-1 JSON file into kernel inputs.
#include "tools/manifest_reader.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "tools/exit_codes.h"
#include "tools/kernel_directives.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSchema = "hipacm-examples-manifest-1";

std::vector<std::string> string_array(const nlohmann::ordered_json& entry, const char* key,
                                      const std::string& where) {
  std::vector<std::string> values;
  if (!entry.contains(key)) return values;  // optional: absent means none
  const nlohmann::ordered_json& array = entry.at(key);
  if (!array.is_array())
    throw InputError(fmt::format("{}: '{}' must be an array of strings", where, key));
  for (const nlohmann::ordered_json& value : array) {
    if (!value.is_string())
      throw InputError(fmt::format("{}: '{}' must be an array of strings", where, key));
    values.push_back(value.get<std::string>());
  }
  return values;
}

KernelInput read_entry(const fs::path& dir, const nlohmann::ordered_json& entry,
                       const std::string& where) {
  if (!entry.is_object()) throw InputError(where + ": entry must be an object");
  if (!entry.contains("source") || !entry.at("source").is_string())
    throw InputError(where + ": 'source' (a file name) is required");
  const fs::path file = dir / entry.at("source").get<std::string>();
  KernelInput kernel;
  kernel.path = file.string();
  kernel.source_name = file.filename().string();
  kernel.source = read_text_file(file);
  kernel.options = string_array(entry, "options", where);
  kernel.name_expressions = string_array(entry, "name_expressions", where);
  if (entry.contains("headers")) {
    const nlohmann::ordered_json& headers = entry.at("headers");
    if (!headers.is_object())
      throw InputError(where + ": 'headers' must map include names to paths");
    for (const auto& [name, path] : headers.items()) {
      if (!path.is_string())
        throw InputError(fmt::format("{}: header '{}' must map to a path", where, name));
      kernel.headers.emplace_back(name, read_text_file(dir / path.get<std::string>()));
    }
  }
  return kernel;
}

}  // namespace

std::vector<KernelInput> read_manifest(const fs::path& manifest) {
  const std::string text = read_text_file(manifest);
  nlohmann::ordered_json document;
  try {
    document = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", manifest.string(), e.what()));
  }
  const auto schema = document.is_object() ? document.value("schema", "") : "";
  if (schema != kSchema)
    throw InputError(
        fmt::format("{}: schema is '{}', want '{}'", manifest.string(), schema, kSchema));
  if (!document.contains("kernels") || !document.at("kernels").is_array())
    throw InputError(manifest.string() + ": 'kernels' must be an array");
  std::vector<KernelInput> kernels;
  const fs::path dir = manifest.parent_path();
  std::size_t index = 0;
  for (const nlohmann::ordered_json& entry : document.at("kernels")) {
    kernels.push_back(
        read_entry(dir, entry, fmt::format("{}: kernels[{}]", manifest.string(), index++)));
  }
  return kernels;
}

}  // namespace hipacm::cli
