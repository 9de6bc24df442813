// SPDX-License-Identifier: MIT
// manifest_reader.cpp - turns a hipacm-examples-manifest-1 JSON file into kernel inputs.
#include "tools/input/manifest_reader.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "tools/common/exit_codes.h"
#include "tools/input/bounded_json.h"
#include "tools/input/input_files.h"
#include "tools/input/kernel_input.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
namespace {

constexpr const char* kSchema = "hipacm-examples-manifest-1";

// Every string of a manifest reaches the compiler as a C string, where a NUL would cut it short.
std::string checked_string(const Json& value, const std::string& where) {
  std::string text = value.get<std::string>();
  if (text.find('\0') != std::string::npos)
    throw InputError(fmt::format("{}: contains a NUL character", where));
  return text;
}

std::vector<std::string> string_array(const Json& entry, const char* key,
                                      const std::string& where) {
  std::vector<std::string> values;
  if (!entry.contains(key)) return values;  // optional: absent means none
  const Json& array = entry.at(key);
  if (!array.is_array())
    throw InputError(
        fmt::format("{}: '{}' must be an array of strings, not {}", where, key, array.type_name()));
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string item = fmt::format("{}: {}[{}]", where, key, i);
    if (!array[i].is_string())
      throw InputError(fmt::format("{} must be a string, not {}", item, array[i].type_name()));
    values.push_back(checked_string(array[i], item));
  }
  return values;
}

KernelInput read_entry(const fs::path& dir, const Json& entry, const std::string& where) {
  if (!entry.is_object())
    throw InputError(fmt::format("{}: entry must be an object, not {}", where, entry.type_name()));
  if (!entry.contains("source") || !entry.at("source").is_string())
    throw InputError(where + ": 'source' (a file name) is required and must be a string");
  const fs::path file = dir / checked_string(entry.at("source"), where + ": source");
  KernelInput kernel;
  kernel.path = file.string();
  kernel.origin = where;
  kernel.source_name = compiler_source_name(file.filename().string());
  kernel.source = read_source_file(file);
  kernel.options = string_array(entry, "options", where);
  kernel.name_expressions = string_array(entry, "name_expressions", where);
  if (entry.contains("headers")) {
    const Json& headers = entry.at("headers");
    if (!headers.is_object())
      throw InputError(fmt::format("{}: 'headers' must map include names to paths, not {}", where,
                                   headers.type_name()));
    for (const auto& [name, path] : headers.items()) {
      const std::string item = fmt::format("{}: header '{}'", where, name);
      if (name.find('\0') != std::string::npos)
        throw InputError(fmt::format("{}: a header name contains a NUL character", where));
      if (!path.is_string())
        throw InputError(fmt::format("{} must map to a path, not {}", item, path.type_name()));
      kernel.headers.emplace_back(name, read_source_file(dir / checked_string(path, item)));
    }
  }
  return kernel;
}

}  // namespace

std::vector<KernelInput> read_manifest_text(std::string_view text, const fs::path& base_dir,
                                            const std::string& label) {
  if (text.size() > kMaxManifestFileBytes)
    throw InputError(fmt::format("{}: larger than the manifest limit of {} MiB", label,
                                 kMaxManifestFileBytes >> 20));
  const Json document = parse_bounded_json(text, label, "not valid JSON");
  if (!document.is_object())
    throw InputError(fmt::format("{}: must be a JSON object, not {}", label, document.type_name()));
  const auto schema = document.find("schema");
  if (schema == document.end() || !schema->is_string() || *schema != kSchema) {
    const std::string found = schema == document.end() ? "missing"
                              : schema->is_string()
                                  ? fmt::format("'{}'", schema->get<std::string>())
                                  : std::string("a ") + schema->type_name();
    throw InputError(fmt::format("{}: schema is {}, want '{}'", label, found, kSchema));
  }
  const auto entries = document.find("kernels");
  if (entries == document.end() || !entries->is_array())
    throw InputError(label + ": 'kernels' must be an array");
  std::vector<KernelInput> kernels;
  std::size_t input_bytes = 0;
  for (std::size_t index = 0; index < entries->size(); ++index) {
    const std::string where = fmt::format("{}: kernels[{}]", label, index);
    try {
      kernels.push_back(read_entry(base_dir, (*entries)[index], where));
    } catch (const Json::exception& e) {
      // Every access above checks its type first; this keeps a missed one an input error.
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
    count_input_bytes(kernels.back().input_bytes(), &input_bytes, where);
  }
  return kernels;
}

std::vector<KernelInput> read_manifest(const fs::path& manifest) {
  return read_manifest_text(read_input_file(manifest, kMaxManifestFileBytes),
                            manifest.parent_path(), manifest.string());
}

}  // namespace hipacm::cli
