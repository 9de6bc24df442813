// SPDX-License-Identifier: MIT
// kernel_input.cpp - expands warmup PATHS (files, directories, manifests) into kernel inputs.
#include "tools/input/kernel_input.h"

#include "plugin/cache/key/path_options.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "hip_backend/code_loading_options.h"
#include "tools/common/exit_codes.h"
#include "tools/input/input_files.h"
#include "tools/input/kernel_directives.h"
#include "tools/input/manifest_reader.h"
#include "tools/input/record_reader.h"

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxOptionSummaryChars = 80;

bool has_extension(const fs::path& file, const std::vector<std::string>& extensions) {
  const std::string name = file.filename().string();
  return std::any_of(extensions.begin(), extensions.end(), [&](const std::string& extension) {
    return name.size() > extension.size() && name.ends_with(extension);
  });
}

std::string extension_list(const std::vector<std::string>& extensions) {
  std::string list;
  for (const std::string& extension : extensions) list += (list.empty() ? "" : ", ") + extension;
  return list;
}

std::vector<fs::path> kernel_files_below(const fs::path& dir,
                                         const std::vector<std::string>& extensions) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (has_extension(it->path(), extensions) && it->is_regular_file(ec))
      files.push_back(it->path());
  }
  if (ec) throw InputError(fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  std::sort(files.begin(), files.end());  // directory order is not deterministic
  return files;
}

std::size_t request_hash(const KernelInput& kernel) {
  std::size_t hash = 0;
  auto mix = [&hash](std::string_view text) {
    // The length is mixed in too, so that fields cannot trade bytes ("ab","c" vs "a","bc").
    hash = hash * 1000003u ^ std::hash<std::string_view>{}(text) ^ (text.size() << 1);
  };
  mix(kernel.source);
  mix(kernel.source_name);
  for (const std::string& option : kernel.options) mix(option);
  mix("\x01headers");
  for (const auto& [name, contents] : kernel.headers) {
    mix(name);
    mix(contents);
  }
  mix("\x01names");
  for (const std::string& expression : kernel.name_expressions) mix(expression);
  return hash;
}

std::string option_summary(const KernelInput& kernel) {
  if (kernel.options.empty()) return "no options";
  std::string summary;
  for (const std::string& option : kernel.options) summary += (summary.empty() ? "" : " ") + option;
  if (summary.size() > kMaxOptionSummaryChars)
    summary = summary.substr(0, kMaxOptionSummaryChars - 3) + "...";
  return summary;
}

// Requests that share a path are told apart by their options, and by their place among the
// requests of that path when the options (as summarised) are the same too.
void assign_labels(std::vector<KernelInput>& kernels) {
  std::map<std::string, std::vector<KernelInput*>> by_path;
  for (KernelInput& kernel : kernels) by_path[kernel.path].push_back(&kernel);
  for (auto& [path, group] : by_path) {
    if (group.size() == 1) {
      group.front()->label = path;
      continue;
    }
    std::map<std::string, int> summary_count;
    for (const KernelInput* kernel : group) ++summary_count[option_summary(*kernel)];
    for (std::size_t i = 0; i < group.size(); ++i) {
      const std::string summary = option_summary(*group[i]);
      group[i]->label = summary_count[summary] == 1
                            ? fmt::format("{} [{}]", path, summary)
                            : fmt::format("{} [#{} {}]", path, i + 1, summary);
    }
  }
}

/// A record line or a manifest entry is data: warming it up must not run code of its choosing in
/// the compiler (a `-Xclang -load` there ran a library's constructor in the worker).
void refuse_code_loading_options(const KernelInput& kernel) {
  const auto found = backend::find_code_loading_option(kernel.options);
  if (!found) return;
  throw InputError(fmt::format(
      "{}: option '{}' {}; options read from a file may not load code into the compiler (pass "
      "--allow-compiler-plugins if you trust this file)",
      kernel.origin.empty() ? kernel.path : kernel.origin, found->option, found->why));
}

}  // namespace

std::size_t KernelInput::input_bytes() const {
  std::size_t bytes = source.size();
  for (const auto& header : headers) bytes += header.first.size() + header.second.size();
  return bytes;
}

bool KernelInput::same_request(const KernelInput& other) const {
  return source == other.source && source_name == other.source_name && options == other.options &&
         headers == other.headers && name_expressions == other.name_expressions &&
         arch == other.arch;
}

std::vector<KernelInput> collect_kernel_inputs(const std::vector<std::string>& paths,
                                               const InputSettings& settings) {
  std::vector<KernelInput> kernels;
  std::unordered_multimap<std::size_t, std::size_t> index_by_hash;  // request hash -> kernels[i]
  std::size_t input_bytes = 0;
  auto add = [&](KernelInput kernel) {
    // Only what came from a file: the command line's own options are the user's choice.
    if (!settings.allow_compiler_plugins) refuse_code_loading_options(kernel);
    kernel.options.insert(kernel.options.begin(), settings.common_options.begin(),
                          settings.common_options.end());
    const std::size_t hash = request_hash(kernel);
    const auto [first, last] = index_by_hash.equal_range(hash);
    for (auto it = first; it != last; ++it)
      if (kernels[it->second].same_request(kernel)) return;  // the very same compile
    count_input_bytes(kernel.input_bytes(), &input_bytes, kernel.path);
    index_by_hash.emplace(hash, kernels.size());
    kernels.push_back(std::move(kernel));
  };
  for (const std::string& path : paths) {
    if (path.empty()) throw InputError("an empty path was given");
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) throw InputError(fmt::format("{}: no such file or directory", path));
    if (fs::is_directory(status)) {
      const auto files = kernel_files_below(path, settings.extensions);
      if (files.empty())
        throw InputError(
            fmt::format("{}: no {} files below it", path, extension_list(settings.extensions)));
      for (const fs::path& file : files) add(read_kernel_file(file));
    } else if (is_record_file(path)) {
      for (KernelInput& kernel : read_record_file(path)) add(std::move(kernel));
    } else if (fs::path(path).extension() == ".json") {
      for (KernelInput& kernel : read_manifest(path)) add(std::move(kernel));
    } else {
      add(read_kernel_file(path));
    }
  }
  if (kernels.empty())
    throw InputError("no kernels to warm: pass .hip files, directories or a manifest");
  assign_labels(kernels);
  return kernels;
}

std::string compiler_source_name(const std::string& file_name) {
  std::string name = file_name.substr(0, 255);
  for (char& c : name) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '+' ||
                         c == '@';
    if (!allowed) c = '_';
  }
  if (name.empty() || name == "." || name == "..") name = "kernel.hip";
  return name;
}

backend::CompileRequest compile_request(const KernelInput& input, const std::string& arch) {
  backend::CompileRequest request;
  request.source = input.source;
  request.source_name = input.source_name;
  request.options = input.options;
  (void)cache::anchor_relative_paths(&request.options);
  request.headers = input.headers;
  request.name_expressions = input.name_expressions;
  request.arch = arch;
  return request;
}

}  // namespace hipacm::cli
