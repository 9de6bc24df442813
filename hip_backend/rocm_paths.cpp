// SPDX-License-Identifier: MIT
// rocm_paths.cpp - ROCm install trees and the candidate lists built from them.
#include "hip_backend/rocm_paths.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#include "support/environment.h"

namespace hipacm::backend {
namespace {

// /opt may hold anything; a bounded number of ROCm trees is plenty.
constexpr std::size_t kMaxTrees = 64;

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "6.4.1" -> {6, 4, 1}; nullopt for anything that is not dot-separated numbers.
std::optional<std::vector<unsigned long>> version_numbers(const std::string& text) {
  std::vector<unsigned long> numbers;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('.', start), text.size());
    const std::string part = text.substr(start, end - start);
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    numbers.push_back(std::strtoul(part.c_str(), nullptr, 10));
    start = end + 1;
  }
  return numbers;
}

struct DirCloser {
  void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};

// opt_dir/rocm-X.Y.Z trees, newest first.
std::vector<std::string> versioned_trees(const std::string& opt_dir) {
  std::vector<std::pair<std::vector<unsigned long>, std::string>> found;
  const std::unique_ptr<DIR, DirCloser> dir(::opendir(opt_dir.c_str()));
  if (!dir) return {};
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string name = entry->d_name;
    if (name.rfind("rocm-", 0) != 0) continue;
    auto version = version_numbers(name.substr(5));
    if (!version || !is_directory(opt_dir + "/" + name)) continue;
    found.emplace_back(std::move(*version), opt_dir + "/" + name);
    if (found.size() >= kMaxTrees) break;
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> trees;
  for (auto& [version, path] : found) trees.push_back(std::move(path));
  return trees;
}

void add_tree(std::vector<std::string>* trees, const std::string& path) {
  if (path.empty() || !is_directory(path)) return;
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  if (std::find(trees->begin(), trees->end(), trimmed) == trees->end()) trees->push_back(trimmed);
}

std::vector<std::string> named_trees() {
  std::vector<std::string> trees;
  for (const char* variable : {"ROCM_PATH", "HIP_PATH"})
    add_tree(&trees, environment_value(variable).value_or(""));
  return trees;
}

void add_in_trees(std::vector<std::string>* out, const std::vector<std::string>& trees,
                  const std::vector<std::string>& sonames) {
  for (const std::string& tree : trees)
    for (const std::string& soname : sonames) out->push_back(tree + "/lib/" + soname);
}

}  // namespace

std::vector<std::string> rocm_install_trees(const std::string& opt_dir) {
  std::vector<std::string> trees = named_trees();
  add_tree(&trees, opt_dir + "/rocm");
  for (const std::string& tree : versioned_trees(opt_dir)) add_tree(&trees, tree);
  return trees;
}

std::vector<std::string> rocm_library_candidates(const std::vector<std::string>& sonames,
                                                 const std::string& opt_dir) {
  const std::vector<std::string> named = named_trees();
  std::vector<std::string> candidates;
  add_in_trees(&candidates, named, sonames);
  candidates.insert(candidates.end(), sonames.begin(), sonames.end());
  std::vector<std::string> others;
  for (const std::string& tree : rocm_install_trees(opt_dir))
    if (std::find(named.begin(), named.end(), tree) == named.end()) others.push_back(tree);
  add_in_trees(&candidates, others, sonames);
  return candidates;
}

std::string rocm_tree_of(const std::string& library_path) {
  std::size_t start = 0;
  while (start < library_path.size()) {
    const std::size_t end = std::min(library_path.find('/', start), library_path.size());
    const std::string part = library_path.substr(start, end - start);
    if (part == "rocm" || (part.rfind("rocm-", 0) == 0 && version_numbers(part.substr(5))))
      return library_path.substr(0, end);
    start = end + 1;
  }
  return {};
}

std::string rocm_release_of(const std::string& library_path) {
  const std::string tree = rocm_tree_of(library_path);
  const std::string tree_name = tree.substr(tree.rfind('/') + 1);
  if (tree_name.rfind("rocm-", 0) == 0) return "ROCm " + tree_name.substr(5);
  // libhiprtc.so.6.4.43484: major.minor, then a build number.
  const std::string file = library_path.substr(library_path.rfind('/') + 1);
  for (const char* stem : {"libhiprtc.so.", "libamdhip64.so."}) {
    if (file.rfind(stem, 0) != 0) continue;
    const auto numbers = version_numbers(file.substr(std::string(stem).size()));
    if (numbers && numbers->size() >= 2)
      return "ROCm " + std::to_string((*numbers)[0]) + "." + std::to_string((*numbers)[1]);
  }
  return {};
}

}  // namespace hipacm::backend
