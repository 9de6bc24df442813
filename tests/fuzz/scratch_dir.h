// SPDX-License-Identifier: MIT
// scratch_dir.h - a private temporary directory for targets that decode files, removed at exit.
#pragma once

#include <filesystem>

namespace hipacm::fuzz {

/// mkdtemp'd (0700) under $TMPDIR. One per target process, emptied between
/// inputs, so that no input sees another's files.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// Removes everything inside, keeping the directory.
  void empty() const;

 private:
  std::filesystem::path path_;
};

}  // namespace hipacm::fuzz
