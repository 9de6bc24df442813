// kernel_input.h - one kernel to warm, in owned form, and how PATHS become a list of them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hipacm::cli {

/// Everything one compile request needs besides the arch.
struct KernelInput {
  std::string path;         ///< as the user will recognise it (the given path, joined)
  std::string source_name;  ///< the file name hipRTC sees, e.g. "saxpy.hip"
  std::string source;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, contents)
  std::vector<std::string> name_expressions;
};

/// Expands PATHS in order: a .hip file is one kernel (directives from its
/// leading // block); a directory contributes every .hip file below it,
/// recursively, sorted by path; a .json file is a manifest. A file reached
/// twice is kept once (the first time). Throws InputError for a missing path,
/// an unreadable file, a bad directive or manifest, or when nothing is found.
std::vector<KernelInput> collect_kernel_inputs(const std::vector<std::string>& paths);

}  // namespace hipacm::cli
