// SPDX-License-Identifier: MIT
// location.cpp - where the caches live and how they may be used, from the mode and the environment.
#include "plugin/cache/store/location.h"

#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include <hipacm/hipacm.h>

#include "plugin/cache/store/schema.h"
#include "support/environment.h"
#include "support/settings.h"
#include "support/status_error.h"

namespace hipacm::cache {
namespace {

std::string env(const char* name) {
  return backend::environment_value(name).value_or(std::string());
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

Policy resolve_policy(std::int32_t requested) {
  switch (requested) {
    case HIPACM_CACHE_OFF:
      return Policy::kOff;
    case HIPACM_CACHE_READ:
      return Policy::kRead;
    case HIPACM_CACHE_READWRITE:
      return Policy::kReadWrite;
    case HIPACM_CACHE_DEFAULT:
      break;
    default:
      throw StatusError(
          HIPACM_ERROR_INVALID_ARGUMENT,
          "cache_policy is " + std::to_string(requested) +
              "; expected HIPACM_CACHE_DEFAULT (0), _OFF (1), _READ (2) or _READWRITE (3)");
  }
  Expected<settings::CachePolicy> policy = settings::cache_policy();
  if (!policy) throw StatusError(policy.failure().status, policy.failure().message);
  return policy.value();
}

CacheSettings resolve_cache_settings(std::int32_t requested_policy, const std::string& mode_dir) {
  CacheSettings out;
  out.policy = resolve_policy(requested_policy);
  if (out.policy == Policy::kOff) return out;
  const std::string dir = user_cache_dir(mode_dir);
  if (!dir.empty()) out.user_db = database_in(dir);
  out.system_db = system_cache_path();
  out.max_bytes = max_cache_bytes();
  return out;
}

std::string user_cache_dir(const std::string& mode_dir) {
  if (!mode_dir.empty()) return mode_dir;
  if (std::optional<std::string> dir = settings::cache_dir()) return *dir;
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/hipacm";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.cache/hipacm";
  return std::string();
}

std::string database_in(const std::string& dir) { return dir + "/" + kDatabaseFileName; }

std::string system_cache_path() {
  const std::string value = settings::system_cache().value_or(std::string());
  if (value.empty()) return value;
  std::error_code ec;
  if (std::filesystem::is_directory(value, ec)) return database_in(value);
  return value;
}

std::int64_t max_cache_bytes() { return settings::cache_max_bytes(); }

std::optional<std::string> network_filesystem(const std::string& path) {
  // statfs magic numbers from linux/magic.h and the CIFS/SMB2 sources.
  struct Known {
    unsigned long magic;
    const char* name;
  };
  static constexpr Known kNetwork[] = {
      {0x6969, "NFS"},         {0x517B, "SMB"},      {0xFF534D42, "CIFS"},
      {0xFE534D42, "SMB2"},    {0x564C, "NCP"},      {0x6B414653, "AFS"},
      {0x5346414F, "OpenAFS"}, {0x47504653, "GPFS"}, {0x0BD00BD0, "Lustre"},
  };
  std::filesystem::path probe(path);
  std::error_code ec;
  while (!probe.empty() && !std::filesystem::exists(probe, ec)) probe = probe.parent_path();
  if (probe.empty()) return std::nullopt;
  struct statfs info {};
  if (::statfs(probe.c_str(), &info) != 0) return std::nullopt;
  for (const Known& known : kNetwork)
    if (static_cast<unsigned long>(info.f_type) == known.magic) return std::string(known.name);
  return std::nullopt;
}

Expected<void> check_cache_dir(const std::string& dir) {
  const auto refused = [](std::string message) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(message)};
  };
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return refused("cannot inspect " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return refused(dir + " is not a directory");
  if (st.st_uid != ::geteuid())
    return refused(dir + " belongs to another user (uid " + std::to_string(st.st_uid) + ")");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return refused(dir + " is writable by other users (mode " + octal_mode(st.st_mode) + ")");
  return {};
}

Expected<void> prepare_writable_dir(const std::string& dir) {
  const auto unusable = [](std::string message) {
    return Failure{HIPACM_ERROR_INVALID_ARGUMENT, std::move(message)};
  };
  // Each missing component is made 0700 here, one at a time (the umask can
  // only take bits away); components that exist, such as ~/.cache, are the
  // user's and keep their mode.
  std::filesystem::path prefix;
  for (const auto& component : std::filesystem::path(dir)) {
    prefix /= component;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return unusable("cannot create " + prefix.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return unusable(dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return unusable(dir + " is not writable: " + std::strerror(errno));
  return check_cache_dir(dir);
}

}  // namespace hipacm::cache
