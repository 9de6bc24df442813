// SPDX-License-Identifier: MIT
// secret_file.cpp - reads a small secret (a key, a password) from a file only its owner can read.
#include "support/files/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "support/files/private_file.h"

namespace hipacm::backend {
namespace {

bool refuse(std::string* why, std::string message) {
  if (why != nullptr) *why = std::move(message);
  return false;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

void wipe_secret(std::string& secret) noexcept {
  volatile char* bytes = secret.data();
  for (std::size_t i = 0; i < secret.size(); ++i) bytes[i] = 0;
  secret.clear();
}

std::string read_secret_file(const std::string& path, std::size_t min_bytes, std::size_t max_bytes,
                             std::string* why) {
  std::string secret;
  const auto fail = [&](std::string message) {
    wipe_secret(secret);
    refuse(why, std::move(message));
    return std::string();
  };
  struct stat st {};
  const UniqueFd fd = open_private_file(path, O_RDONLY, S_IFREG, &st);
  if (!fd.valid()) {
    const int error = errno;
    struct stat seen {};
    if (::lstat(path.c_str(), &seen) == 0 && S_ISLNK(seen.st_mode))
      return fail(path + " is a symbolic link; name the file itself");
    if (error == ENOENT) return fail(path + " does not exist");
    if (::lstat(path.c_str(), &seen) == 0 && seen.st_uid != ::geteuid())
      return fail(path + " is owned by uid " + std::to_string(seen.st_uid) +
                  ", not by this user (uid " + std::to_string(::geteuid()) + ")");
    if (::lstat(path.c_str(), &seen) == 0 && !S_ISREG(seen.st_mode))
      return fail(path + " is not a regular file");
    return fail("cannot open " + path + ": " + std::strerror(error));
  }
  if ((st.st_mode & 077) != 0)
    return fail(path + " is readable or writable by its group or others (mode " +
                octal_mode(st.st_mode) + "); chmod 600 it");
  // One more byte than allowed, and a trailing newline, tell a file that is too large.
  if (st.st_size < 0 || static_cast<std::size_t>(st.st_size) > max_bytes + 2)
    return fail(path + " holds " + std::to_string(st.st_size) + " bytes; at most " +
                std::to_string(max_bytes) + " are accepted");
  secret.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < secret.size()) {
    const ssize_t n = ::read(fd.get(), secret.data() + done, secret.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot read " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  secret.resize(done);
  if (!secret.empty() && secret.back() == '\n') {
    secret.pop_back();
    if (!secret.empty() && secret.back() == '\r') secret.pop_back();
  }
  if (secret.size() < min_bytes)
    return fail(path + " holds " + std::to_string(secret.size()) + " bytes; at least " +
                std::to_string(min_bytes) + " are needed");
  if (secret.size() > max_bytes)
    return fail(path + " holds " + std::to_string(secret.size()) + " bytes; at most " +
                std::to_string(max_bytes) + " are accepted");
  return secret;
}

}  // namespace hipacm::backend
