// SPDX-License-Identifier: MIT
// cache_location.cpp - resolves the cache directory and whether this user can write it.
#include "tools/doctor/cache_location.h"

#include "plugin/cache/store/location.h"
#include "support/environment.h"
#include "support/settings.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

// A directory that does not exist yet is fine when its nearest existing ancestor is writable.
void check_writable(CacheLocation* location) {
  std::error_code ec;
  fs::path probe = location->path;
  location->exists = fs::is_directory(probe, ec);
  if (fs::exists(probe, ec) && !location->exists) {
    location->problem = "exists but is not a directory";
    return;
  }
  // The same owner and mode check as every process that opens the cache there.
  if (location->exists) {
    if (Expected<void> own = cache::check_cache_dir(location->path); !own) {
      location->problem = std::move(own).failure().message;
      return;
    }
  }
  while (!fs::exists(probe, ec) && probe.has_parent_path() && probe != probe.parent_path())
    probe = probe.parent_path();
  if (::access(probe.c_str(), W_OK | X_OK) == 0) {
    location->writable = true;
  } else {
    location->problem = probe.string() + ": " + std::strerror(errno);
  }
}

}  // namespace

CacheLocation resolve_cache_location(const std::string& explicit_dir) {
  CacheLocation location;
  // The path comes from the cache library itself, so what doctor reports is
  // what a mode opens; only the label saying which setting chose it is ours.
  location.path = cache::user_cache_dir(explicit_dir);
  if (location.path.empty()) {
    location.problem = std::string("no ") + settings::name(settings::Id::kCacheDir) +
                       ", XDG_CACHE_HOME or home directory";
    return location;
  }
  location.source = !explicit_dir.empty()   ? "--cache-dir"
                    : settings::cache_dir() ? settings::name(settings::Id::kCacheDir)
                    : backend::environment_value("XDG_CACHE_HOME") ? "XDG_CACHE_HOME"
                                                                   : "HOME";
  location.database = cache::database_in(location.path);
  if (std::optional<std::string> fs_name = cache::network_filesystem(location.path))
    location.network_fs = std::move(*fs_name);
  check_writable(&location);
  return location;
}

}  // namespace hipacm::cli
