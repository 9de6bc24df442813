// SPDX-License-Identifier: MIT
// record_reader.cpp - turns a $HIPACM_RECORD file (JSON Lines) into kernel inputs.
#include "tools/input/record_reader.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>

#include "plugin/record/record_format.h"
#include "support/files/unique_fd.h"
#include "tools/common/exit_codes.h"
#include "tools/input/bounded_json.h"
#include "tools/input/input_files.h"
#include "tools/input/manifest_reader.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
namespace {

std::string record_prefix() { return fmt::format("{{\"schema\":\"{}\"", kRecordSchema); }

std::string text_field(const Json& value, const std::string& where) {
  if (!value.is_string())
    throw InputError(fmt::format("{} must be a string, not {}", where, value.type_name()));
  std::string text = value.get<std::string>();
  if (text.find('\0') != std::string::npos)
    throw InputError(fmt::format("{}: contains a NUL character", where));
  return text;
}

const Json* optional_array(const Json& record, const char* key, const std::string& where) {
  const auto it = record.find(key);
  if (it == record.end()) return nullptr;
  if (!it->is_array())
    throw InputError(fmt::format("{}: '{}' must be an array, not {}", where, key, it->type_name()));
  return &*it;
}

std::vector<std::string> text_array(const Json& record, const char* key, const std::string& where) {
  std::vector<std::string> values;
  if (const Json* array = optional_array(record, key, where))
    for (std::size_t i = 0; i < array->size(); ++i)
      values.push_back(text_field((*array)[i], fmt::format("{}: {}[{}]", where, key, i)));
  return values;
}

const Json& required(const Json& record, const char* key, const std::string& where) {
  const auto it = record.find(key);
  if (it == record.end()) throw InputError(fmt::format("{}: '{}' is required", where, key));
  return *it;
}

Json parse_line(std::string_view line, const std::string& where) {
  return parse_bounded_json(line, where, "not a JSON record");
}

KernelInput read_record(const Json& record, const std::string& where) {
  if (!record.is_object())
    throw InputError(fmt::format("{}: must be a JSON object, not {}", where, record.type_name()));
  const auto schema = record.find("schema");
  if (schema == record.end() || !schema->is_string() || *schema != kRecordSchema)
    throw InputError(fmt::format("{}: schema must be '{}'", where, kRecordSchema));
  KernelInput kernel;
  kernel.path = where;
  kernel.origin = where;
  kernel.source = text_field(required(record, "source", where), where + ": source");
  kernel.source_name = text_field(required(record, "source_name", where), where + ": source_name");
  if (record.contains("arch")) kernel.arch = text_field(record.at("arch"), where + ": arch");
  kernel.options = text_array(record, "options", where);
  kernel.name_expressions = text_array(record, "name_expressions", where);
  if (const Json* headers = optional_array(record, "headers", where)) {
    for (std::size_t i = 0; i < headers->size(); ++i) {
      const std::string item = fmt::format("{}: headers[{}]", where, i);
      const Json& header = (*headers)[i];
      if (!header.is_object())
        throw InputError(fmt::format("{} must be an object with 'name' and 'source', not {}", item,
                                     header.type_name()));
      kernel.headers.emplace_back(text_field(required(header, "name", item), item + ": name"),
                                  text_field(required(header, "source", item), item + ": source"));
    }
  }
  return kernel;
}

}  // namespace

bool is_record_file(const fs::path& file) {
  if (file.extension() == ".jsonl") return true;
  const backend::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const std::string prefix = record_prefix();
  std::string start(prefix.size(), '\0');
  std::size_t used = 0;
  while (used < start.size()) {
    const ssize_t n = ::read(fd.get(), start.data() + used, start.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    used += static_cast<std::size_t>(n);
  }
  return start == prefix;
}

std::vector<KernelInput> read_record_text(std::string_view text, const std::string& label) {
  if (text.size() > kMaxRecordFileBytes)
    throw InputError(fmt::format("{}: larger than the record file limit of {} MiB", label,
                                 kMaxRecordFileBytes >> 20));
  std::vector<KernelInput> kernels;
  std::size_t input_bytes = 0;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", label, line_number);
    try {
      kernels.push_back(read_record(parse_line(line, where), where));
    } catch (const Json::exception& e) {
      // Every access above checks its type first; this keeps a missed one an input error.
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
    count_input_bytes(kernels.back().input_bytes(), &input_bytes, where);
  }
  if (kernels.empty()) throw InputError(fmt::format("{}: no records in it", label));
  return kernels;
}

std::vector<KernelInput> read_record_file(const fs::path& file) {
  return read_record_text(read_input_file(file, kMaxRecordFileBytes), file.string());
}

}  // namespace hipacm::cli
