// SPDX-License-Identifier: MIT
// runtime_dir.cpp - finds and checks this user's private per-machine directory.
#include "hip_backend/machine/runtime_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "support/bytes/sha256.h"
#include "support/environment.h"
#include "support/files/private_file.h"
#include "support/settings.h"

namespace hipacm::backend {
namespace {

// The compile service's socket is <dir>/compile-service-<16 hex>.sock; the whole path must fit
// sockaddr_un's sun_path with its terminating NUL.
constexpr std::size_t kSocketNameLength =
    std::string_view("/compile-service-0123456789abcdef.sock").size();
constexpr std::size_t kMaxRuntimeDirLength = sizeof(sockaddr_un{}.sun_path) - 1 - kSocketNameLength;

// The names hipacm makes in its runtime directory: a directory that holds only these (one that
// an earlier hipacm made before the marker existed) is hipacm's.
bool hipacm_name(const std::string& name) {
  return name == kRuntimeDirMarker || name == "worker-slots" || name == "worker-slots.wake" ||
         name == "pch" || name == "facts" || name.rfind("compile-service-", 0) == 0;
}

/// Why `dir` cannot hold hipacm's runtime files (INTERNAL).
Failure unusable(std::string why) { return Failure{HIPACM_ERROR_INTERNAL, std::move(why)}; }

Expected<void> inspect_directory(const std::string& dir, struct stat* st) {
  if (dir.empty() || dir.front() != '/') {
    return unusable("'" + dir + "' is not an absolute path");
  }
  if (::lstat(dir.c_str(), st) != 0) {
    return unusable("cannot inspect " + dir + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st->st_mode)) {
    return unusable(dir + (S_ISLNK(st->st_mode) ? " is not a directory (a symbolic link)"
                                                : " is not a directory"));
  }
  if (st->st_uid != ::geteuid()) {
    return unusable(dir + " belongs to another user (uid " + std::to_string(st->st_uid) + ")");
  }
  if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return unusable(dir + " is writable by other users");
  }
  return {};
}

std::string home_directory() {
  if (auto home = environment_value("HOME"); home && home->front() == '/') return *home;
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
      found->pw_dir != nullptr && found->pw_dir[0] == '/')
    return found->pw_dir;
  return "";
}

// The host name as a file name, or its hash when it holds anything unusual.
std::string host_part() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  std::string host(name);
  for (char c : host) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    if (!plain || host == "." || host == "..")
      return sha256_hex(host.data(), host.size()).substr(0, 16);
  }
  return host;
}

// Makes the fallback's parents: they must be directories of this user no one else can write,
// or another user could move our directory away and put theirs in its place.
Expected<void> make_fallback_parents(const std::string& dir) {
  const std::string parent = dir.substr(0, dir.rfind('/'));
  const std::string base = parent.substr(0, parent.rfind('/'));
  if (::mkdir(base.c_str(), 0700) != 0 && errno != EEXIST) {
    return unusable("cannot create " + base + ": " + std::strerror(errno));
  }
  return make_private_directory(parent);
}

}  // namespace

std::string fallback_runtime_dir() {
  std::string base;
  if (auto xdg = environment_value("XDG_CACHE_HOME"); xdg && xdg->front() == '/') {
    base = *xdg;
  } else if (const std::string home = home_directory(); !home.empty()) {
    base = home + "/.cache";
  } else {
    return "";
  }
  const std::string host = host_part();
  std::string dir = base + "/hipacm/run-" + host;
  if (dir.size() > kMaxRuntimeDirLength)
    dir = base + "/hipacm/run-" + sha256_hex(host.data(), host.size()).substr(0, 12);
  return dir;
}

RuntimeDirChoice choose_runtime_dir() {
  RuntimeDirChoice choice;
  if (auto dir = settings::runtime_dir()) {
    choice.path = *dir;
    return choice;
  }
  if (auto xdg = environment_value("XDG_RUNTIME_DIR"); xdg && xdg->front() == '/') {
    choice.path = *xdg + "/hipacm";
  } else {
    choice.path = "/tmp/hipacm-" + std::to_string(::geteuid());
  }
  Expected<void> made = make_runtime_directory(choice.path);
  if (made) return choice;
  // Anyone can make /tmp/hipacm-<uid> before us. Used anyway, the owner could answer our
  // service socket or hold our slots; refused without a fallback, every feature that needs it
  // would be lost to whoever made it.
  choice.passed_over = choice.path;
  choice.passed_over_because = std::move(made).failure().message;
  const std::string fallback = fallback_runtime_dir();
  std::string fallback_why;
  Expected<void> fallback_made = unusable("");  // no home directory: nothing more to say
  if (!fallback.empty()) {
    fallback_made = make_fallback_parents(fallback);
    if (fallback_made) fallback_made = make_runtime_directory(fallback);
  }
  if (fallback_made) {
    choice.path = fallback;
  } else {
    fallback_why = std::move(fallback_made).failure().message;
    choice.passed_over_because +=
        "; the fallback " + (fallback.empty() ? std::string("(no home directory)") : fallback) +
        " cannot be used either" + (fallback_why.empty() ? "" : ": " + fallback_why);
  }
  return choice;
}

std::string runtime_dir_from_environment() { return choose_runtime_dir().path; }

Expected<void> make_private_directory(const std::string& dir) {
  if (dir.empty() || dir.front() != '/') {
    return unusable("'" + dir + "' is not an absolute path");
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return unusable("cannot create " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  return inspect_directory(dir, &st);
}

Expected<void> make_runtime_directory(const std::string& dir) {
  if (dir.empty() || dir.front() != '/') {
    return unusable("'" + dir + "' is not an absolute path");
  }
  const bool created = ::mkdir(dir.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    return unusable("cannot create " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (Expected<void> inspected = inspect_directory(dir, &st); !inspected) return inspected;
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return unusable(dir + " is open to other users (mode " + mode +
                    "): hipacm keeps its runtime files only in a directory of mode 0700");
  }
  const std::string marker = dir + "/" + kRuntimeDirMarker;
  if (!created && open_private_file(marker, O_RDONLY).valid()) return {};
  if (!created) {
    DIR* listing = ::opendir(dir.c_str());
    if (listing == nullptr) {
      return unusable("cannot list " + dir + ": " + std::strerror(errno));
    }
    std::string foreign;
    while (const dirent* entry = ::readdir(listing)) {
      const std::string name = entry->d_name;
      if (name != "." && name != ".." && !hipacm_name(name)) {
        foreign = name;
        break;
      }
    }
    ::closedir(listing);
    if (!foreign.empty()) {
      return unusable(
          dir + " is not dedicated to hipacm (it holds '" + foreign +
          "', which hipacm did not make): hipacm keeps its runtime files only in an empty "
          "directory of mode 0700 or one it made");
    }
  }
  // Made by us, or empty but for our own names: ours from now on.
  UniqueFd fd = open_private_file(marker, O_WRONLY | O_CREAT);
  if (fd.valid()) {
    static constexpr char kText[] = "This directory belongs to hipacm (its runtime directory).\n";
    [[maybe_unused]] const ssize_t n = ::write(fd.get(), kText, sizeof kText - 1);
  }
  return {};
}

}  // namespace hipacm::backend
