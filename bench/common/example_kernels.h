// SPDX-License-Identifier: MIT
// example_kernels.h - the example kernels as compile requests, read from their "// hipacm:"
// directives or from a manifest, for the benchmarks and the device checks alike.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hipacm::bench {

/// One compile request in owned form.
struct KernelSource {
  std::string file;  ///< the source name the compiler sees, e.g. "saxpy.hip" (plus "@n" in a set)
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, contents)
  std::vector<std::string> header_dirs;                      ///< for hipcc: -I paths
  std::vector<std::string> name_expressions;
  std::vector<std::string> functions;  ///< extern "C" kernels a manifest lists; empty otherwise
};

/// The whole file. Throws std::runtime_error("cannot read <path>") when it cannot be opened.
std::string read_text(const std::filesystem::path& path);

/// Reads every .hip file in `dir` (sorted) and its directives:
///   // hipacm: option=-O3
///   // hipacm: header=include/x.h      (included as "x.h")
///   // hipacm: name_expression=scale<float>
/// Throws std::runtime_error when the directory or a header cannot be read.
std::vector<KernelSource> load_example_kernels(const std::string& dir);

/// Reads `dir`/manifest.json (schema hipacm-examples-manifest-1) and every source and header it
/// names. Throws std::runtime_error with the file and the reason when anything is missing or
/// malformed.
std::vector<KernelSource> load_example_manifest(const std::string& dir);

/// Reads `dir`/manifest.json of schema `schema`: each entry names its source file (relative to
/// `dir`) under `source_key` and has "options" and "name_expressions"; `read_more` reads any
/// other fields of an entry. Throws std::runtime_error naming the manifest when it is missing,
/// malformed, of another schema or empty.
std::vector<KernelSource> read_kernel_manifest(
    const std::string& dir, const char* schema, const char* source_key,
    const std::function<void(const nlohmann::json& entry, KernelSource& kernel)>& read_more);

/// `count` distinct requests: the examples, each repeated with a different
/// -DHIPACM_BENCH_VARIANT=<n> and a matching comment, so that no two
/// requests are the same compile.
std::vector<KernelSource> make_distinct_set(const std::vector<KernelSource>& examples,
                                            std::size_t count);

}  // namespace hipacm::bench
