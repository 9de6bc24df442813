// SPDX-License-Identifier: MIT
// runtime_dir.cpp - finds and checks this user's private per-machine directory.
#include "hip_backend/worker/runtime_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/environment.h"

namespace hipacm::backend {

std::string runtime_dir_from_environment() {
  if (auto dir = environment_value("HIPACM_RUNTIME_DIR")) return *dir;
  if (auto xdg = environment_value("XDG_RUNTIME_DIR"); xdg && xdg->front() == '/') {
    return *xdg + "/hipacm";
  }
  return "/tmp/hipacm-" + std::to_string(::geteuid());
}

bool make_private_directory(const std::string& dir, std::string* why) {
  if (dir.empty() || dir.front() != '/') {
    *why = "'" + dir + "' is not an absolute path";
    return false;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = "cannot create " + dir + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    *why = "cannot inspect " + dir + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *why = dir + " is not a directory";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    *why = dir + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    *why = dir + " is writable by other users";
    return false;
  }
  return true;
}

}  // namespace hipacm::backend
