// example_set.h - the example kernels as examples/kernels/manifest.json describes them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hipacm::device {

/// One example source with everything a compile request needs, read from disk.
struct ExampleSource {
  std::string file;  ///< e.g. "saxpy.hip"
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, contents)
  std::vector<std::string> name_expressions;
  std::vector<std::string> functions;  ///< extern "C" kernels the code object defines
};

/// Reads `dir`/manifest.json (schema hipacm-examples-manifest-1) and every file it names.
/// Throws std::runtime_error with the file and the reason when anything is missing or malformed.
std::vector<ExampleSource> load_example_set(const std::string& dir);

}  // namespace hipacm::device
