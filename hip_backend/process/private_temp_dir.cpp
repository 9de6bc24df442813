// SPDX-License-Identifier: MIT
// private_temp_dir.cpp - a mode-0700 directory from mkdtemp, removed with all it holds, links
// unfollowed.
#include "hip_backend/process/private_temp_dir.h"

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "support/environment.h"

namespace hipacm::backend {
namespace {

// Directories nftw may hold open at once; deeper trees are still walked.
constexpr int kWalkDescriptors = 16;

/// nftw callback, children before parents (FTW_DEPTH); the root is left alone.
int remove_entry(const char* path, const struct stat*, int type, FTW* where) {
  if (where->level == 0) return 0;
  const bool directory = type == FTW_DP || type == FTW_DNR;
  // A failure does not stop the walk: the rest is still removed, and a
  // directory left non-empty makes the caller's final rmdir fail.
  (void)(directory ? ::rmdir(path) : ::unlink(path));
  return 0;
}

}  // namespace

std::string temp_base_dir() {
  if (auto dir = environment_value("TMPDIR"); dir && dir->front() == '/') return *dir;
  return "/tmp";
}

bool remove_directory_contents(const std::string& dir) {
  // FTW_PHYS: links are entries, not targets. FTW_MOUNT: a mount point
  // planted inside is not entered. No FTW_CHDIR, so this is thread-safe.
  return ::nftw(dir.c_str(), remove_entry, kWalkDescriptors, FTW_PHYS | FTW_DEPTH | FTW_MOUNT) == 0;
}

bool remove_directory_tree(const std::string& dir) {
  // A process that still writes there (a service worker finishing a compile it began before it
  // was handed back) can add a file between the walk and the rmdir: the walk runs again, a few
  // times. Once the rmdir succeeds nothing can be created in the directory any more.
  for (int attempt = 0; attempt < 5; ++attempt) {
    remove_directory_contents(dir);
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != ENOTEMPTY && errno != EEXIST) return false;
    ::usleep(10000);
  }
  return false;
}

Expected<std::unique_ptr<PrivateTempDir>> PrivateTempDir::create(const std::string& prefix) {
  const std::string base = temp_base_dir();
  std::string pattern = base + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  // mkdtemp creates the directory with mode 0700 whatever the umask.
  if (::mkdtemp(buffer.data()) == nullptr) {
    return Failure{HIPACM_ERROR_INTERNAL,
                   "cannot create a private directory in " + base + ": " + std::strerror(errno)};
  }
  return std::make_unique<PrivateTempDir>(Key(), std::string(buffer.data()));
}

PrivateTempDir::PrivateTempDir(Key, std::string path) : path_(std::move(path)) {}

PrivateTempDir::~PrivateTempDir() {
  if (!path_.empty()) remove_directory_tree(path_);
}

}  // namespace hipacm::backend
