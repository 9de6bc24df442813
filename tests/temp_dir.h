// SPDX-License-Identifier: MIT
// temp_dir.h - TempDir: a fresh private directory for one scope, removed after it, for every suite.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace hipacm::test {

/// A fresh directory under the system's temporary directory, made by mkdtemp (0700, a name no one
/// could know in advance) and removed with everything in it. path() is "" when it could not be
/// made, which a test checks before it relies on it.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "hipacm-test-") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(&pattern[0]) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace hipacm::test
