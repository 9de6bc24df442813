// SPDX-License-Identifier: MIT
// output_files.cpp - the checked writes of the tool's reports and code objects.
#include "tools/common/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "support/files/private_file.h"
#include "support/files/unique_fd.h"
#include "tools/common/exit_codes.h"

namespace hipacm::cli {

void check_output_directory(const std::string& dir) {
  struct stat link {};
  struct stat st {};
  if (::lstat(dir.c_str(), &link) != 0 || ::stat(dir.c_str(), &st) != 0)
    throw InputError(fmt::format("cannot use {} for output: {}", dir, std::strerror(errno)));
  // A link of this user's (or root's) to a directory is the user's choice; another user's link
  // points wherever its owner likes.
  const auto trusted = [](uid_t uid) { return uid == ::geteuid() || uid == 0; };
  if (S_ISLNK(link.st_mode) && !trusted(link.st_uid))
    throw InputError(
        fmt::format("cannot use {} for output: it is a symbolic link of another user (uid {})", dir,
                    link.st_uid));
  if (!S_ISDIR(st.st_mode))
    throw InputError(fmt::format("cannot use {} for output: it is not a directory", dir));
  if (!trusted(st.st_uid))
    throw InputError(fmt::format(
        "cannot use {} for output: it belongs to another user (uid {}), who could replace what "
        "is written there",
        dir, st.st_uid));
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)
    throw InputError(fmt::format(
        "cannot use {} for output: every user may write it and it has no sticky bit, so anyone "
        "could replace what is written there",
        dir));
}

namespace {

/// The descriptor that /dev/stdout, /dev/stderr or /dev/fd/N names (a shell's `>(cmd)` is one),
/// or -1: these are the caller's own descriptors, not files to check.
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  constexpr std::string_view kFd = "/dev/fd/";
  if (path.size() <= kFd.size() || path.size() > kFd.size() + 4 ||
      path.compare(0, kFd.size(), kFd) != 0)
    return -1;
  int fd = 0;
  for (std::size_t i = kFd.size(); i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9') return -1;
    fd = fd * 10 + (path[i] - '0');
  }
  return ::fcntl(fd, F_GETFD) >= 0 ? fd : -1;
}

void write_all(int fd, const std::string& path, std::string_view bytes) {
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void write_output_file(const std::string& path, std::string_view bytes) {
  if (const int own = named_descriptor(path); own >= 0) {
    std::cout.flush();  // what the tool printed before comes first
    write_all(own, path, bytes);
    return;
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  check_output_directory(parent.empty() ? "." : parent.string());
  const backend::UniqueFd fd =
      backend::open_private_file(path, O_WRONLY | O_CREAT | O_TRUNC, S_IFREG, nullptr, 0644);
  if (!fd.valid()) {
    const int error = errno;
    const char* why = error == ELOOP    ? "it is a symbolic link"
                      : error == EPERM  ? "it belongs to another user"
                      : error == EINVAL ? "it is not a regular file"
                                        : std::strerror(error);
    throw InputError(fmt::format("cannot write {}: {}", path, why));
  }
  write_all(fd.get(), path, bytes);
}

}  // namespace hipacm::cli
