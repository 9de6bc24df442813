// SPDX-License-Identifier: MIT
// database_file.cpp - the database file on disk: created private, checked regular, moved aside.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"
#include "support/log.h"

namespace hipacm::cache {
namespace {

void rename_if_present(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
    backend::log(backend::LogLevel::kWarning,
                 "cannot move " + from + " aside: " + std::strerror(errno));
}

}  // namespace

std::string moved_aside_name(const std::string& path) {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return path + ".corrupt-" + stamp;
}

void refuse_non_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // missing: SQLite creates it or reports it
  if (S_ISREG(st.st_mode)) return;
  const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a device";
  throw std::runtime_error(path + " is " + what + ", not a regular file: it cannot be a cache " +
                           "database");
}

namespace store_internal {

// SQLite creates a database file 0644 & ~umask and gives its -wal, -shm and
// -journal the database's mode; creating it first, 0600, keeps all of them
// private whatever the umask.
void create_private_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
}

std::string move_aside(const std::string& path) {
  const std::string aside = moved_aside_name(path);
  // A damaged database's journal belongs to it; replaying it onto a fresh
  // file would be wrong.
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    rename_if_present(path + suffix, aside + suffix);
  return aside;
}

}  // namespace store_internal
}  // namespace hipacm::cache
