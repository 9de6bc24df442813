// cache_location.cpp - resolves the cache directory and whether this user can write it.
#include "tools/cache_location.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace hipacm::cli {
namespace fs = std::filesystem;
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string home_dir() {
  if (std::string home = env("HOME"); !home.empty()) return home;
  if (const passwd* entry = ::getpwuid(::getuid()); entry && entry->pw_dir) return entry->pw_dir;
  return "";
}

// A directory that does not exist yet is fine when its nearest existing ancestor is writable.
void check_writable(CacheLocation* location) {
  std::error_code ec;
  fs::path probe = location->path;
  location->exists = fs::is_directory(probe, ec);
  if (fs::exists(probe, ec) && !location->exists) {
    location->problem = "exists but is not a directory";
    return;
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
  auto choose = [&](std::string path, const char* source) {
    location.path = std::move(path);
    location.source = source;
  };
  if (!explicit_dir.empty()) {
    choose(explicit_dir, "--cache-dir");
  } else if (std::string dir = env("HIPACM_CACHE_DIR"); !dir.empty()) {
    choose(dir, "HIPACM_CACHE_DIR");
  } else if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
    choose((fs::path(xdg) / "hipacm").string(), "XDG_CACHE_HOME");
  } else if (std::string home = home_dir(); !home.empty()) {
    choose((fs::path(home) / ".cache" / "hipacm").string(), "HOME");
  } else {
    location.problem = "no HIPACM_CACHE_DIR, XDG_CACHE_HOME or home directory";
    return location;
  }
  check_writable(&location);
  return location;
}

}  // namespace hipacm::cli
