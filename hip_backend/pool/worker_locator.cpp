// SPDX-License-Identifier: MIT
// worker_locator.cpp - finds hipacm-worker from $HIPACM_WORKER or beside the loaded plugin.
#include "hip_backend/pool/worker_locator.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "support/settings.h"

// Where an installed hipacm-worker sits relative to the installed library
// directory; CMake derives it from GNUInstallDirs (LIBDIR -> LIBEXECDIR).
#ifndef HIPACM_WORKER_INSTALL_RELPATH
#define HIPACM_WORKER_INSTALL_RELPATH "../libexec/hipacm/hipacm-worker"
#endif

namespace hipacm::backend {
namespace {

constexpr const char* kWorkerName = "hipacm-worker";

/// "" when `path` is an executable regular file, else why not.
std::string check_executable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return std::strerror(errno);
  return "";
}

/// The directory of the binary (shared object or executable) holding this code.
std::string own_binary_dir() {
  Dl_info info{};
  link_map* map = nullptr;
  std::string file;
  if (dladdr1(reinterpret_cast<void*>(&own_binary_dir), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) != 0 &&
      map && map->l_name && map->l_name[0] != '\0') {
    file = map->l_name;  // a shared object: the path it was loaded from
  } else {
    file = "/proc/self/exe";  // linked into the executable (argv[0] may be relative)
  }
  char resolved[PATH_MAX];
  if (::realpath(file.c_str(), resolved)) file = resolved;  // follow the .so symlinks
  const auto slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

}  // namespace

Expected<std::string> find_worker_binary() { return find_worker_binary_beside(own_binary_dir()); }

Expected<std::string> find_worker_binary_beside(const std::string& binary_dir) {
  if (const auto env = settings::worker_path()) {
    const std::string problem = check_executable(*env);
    if (problem.empty()) return *env;
    return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                   std::string(settings::name(settings::Id::kWorker)) + "=" + *env +
                       " is not usable: " + problem};
  }
  const std::vector<std::string> candidates = {binary_dir + "/" + kWorkerName,
                                               binary_dir + "/" + HIPACM_WORKER_INSTALL_RELPATH};
  std::string tried;
  for (const std::string& path : candidates) {
    const std::string problem = check_executable(path);
    if (problem.empty()) return path;
    tried += (tried.empty() ? "" : ", ") + path + " (" + problem + ")";
  }
  return Failure{HIPACM_ERROR_BACKEND_UNAVAILABLE,
                 std::string("cannot find ") + kWorkerName + "; looked at " + tried + ". Set " +
                     settings::name(settings::Id::kWorker) + " to its path."};
}

}  // namespace hipacm::backend
