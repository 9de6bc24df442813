// kernel_set.h - loads the example kernels (with their "// hipacm:" directives) as benchmark
// requests.
#pragma once

#include <string>
#include <vector>

namespace hipacm::bench {

/// One compile request in owned form, as the examples directory describes it.
struct KernelSource {
  std::string name;  ///< file name, e.g. "saxpy.hip", plus a variant suffix
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, contents)
  std::vector<std::string> header_dirs;                      ///< for hipcc: -I paths
  std::vector<std::string> name_expressions;
};

/// Reads every .hip file in `dir` (sorted) and its directives:
///   // hipacm: option=-O3
///   // hipacm: header=include/x.h      (included as "x.h")
///   // hipacm: name_expression=scale<float>
/// Throws std::runtime_error when the directory or a header cannot be read.
std::vector<KernelSource> load_example_kernels(const std::string& dir);

/// `count` distinct requests: the examples, each repeated with a different
/// -DHIPACM_BENCH_VARIANT=<n> and a matching comment, so that no two
/// requests are the same compile.
std::vector<KernelSource> make_distinct_set(const std::vector<KernelSource>& examples,
                                            std::size_t count);

}  // namespace hipacm::bench
