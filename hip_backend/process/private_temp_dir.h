// SPDX-License-Identifier: MIT
// private_temp_dir.h - a mode-0700 directory from mkdtemp, removed with all it holds, links
// unfollowed.
#pragma once

#include <memory>
#include <string>

#include "support/failure.h"

namespace hipacm::backend {

/// The directory temporary directories go in: $TMPDIR when it is an absolute
/// path (read through environment_value, so never in a privileged host),
/// otherwise /tmp.
std::string temp_base_dir();

/// Removes everything inside `dir` but not `dir` itself. Symbolic links are
/// removed, never followed, and no other file system is entered, so a link
/// planted inside cannot make this delete anything outside. True when the
/// whole tree could be walked (an entry that cannot be removed is skipped).
bool remove_directory_contents(const std::string& dir);

/// remove_directory_contents(dir), then `dir` itself. True when it is gone.
bool remove_directory_tree(const std::string& dir);

/// A private directory, <temp_base_dir()>/<prefix>XXXXXX, mode 0700, owned by
/// one object and removed (with everything in it) when that object goes.
class PrivateTempDir {
 public:
  /// The prefix of every hipacm-worker's directory.
  static constexpr const char* kWorkerPrefix = "hipacm-worker-";

  /// Makes the directory with mkdtemp, or says (INTERNAL) why it cannot.
  static Expected<std::unique_ptr<PrivateTempDir>> create(const std::string& prefix);

  /// Only create() can make the key, so only create() constructs.
  class Key {
    friend class PrivateTempDir;
    Key() = default;
  };
  PrivateTempDir(Key, std::string path);
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  ~PrivateTempDir();

  const std::string& path() const { return path_; }

  /// Forgets the directory without removing it: for a forked child's copy,
  /// which the parent still uses.
  void release() { path_.clear(); }

 private:
  std::string path_;
};

}  // namespace hipacm::backend
