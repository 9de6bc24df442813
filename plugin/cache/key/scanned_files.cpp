// SPDX-License-Identifier: MIT
// scanned_files.cpp - file identities, the memo of scanned files, and the bounded read.
#include "plugin/cache/key/scanned_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/thread/lock_guard.hpp>

#include <cerrno>

#include "support/no_destructor.h"

namespace hipacm::cache::input_scan {

FileIdentity identity_of(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size,
          std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
          std::int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec};
}

std::string stat_state(const struct stat* st, int stat_errno) {
  if (st == nullptr) return stat_errno == ENOENT || stat_errno == ENOTDIR ? "absent" : "error";
  if (!S_ISREG(st->st_mode)) return "not-a-file";
  const FileIdentity id = identity_of(*st);
  return "file " + std::to_string(id.device) + " " + std::to_string(id.inode) + " " +
         std::to_string(id.size) + " " + std::to_string(id.mtime_ns) + " " +
         std::to_string(id.ctime_ns);
}

std::string path_state(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return stat_state(nullptr, errno);
  return stat_state(&st, 0);
}

bool ScanMemo::find(const std::string& path, const FileIdentity& id, ScannedFile* out) {
  boost::lock_guard<boost::mutex> lock(mutex_);
  const auto it = files_.find(path);
  if (it == files_.end() || !(it->second.identity == id)) return false;
  *out = it->second;
  return true;
}

void ScanMemo::put(const std::string& path, const ScannedFile& file) {
  boost::lock_guard<boost::mutex> lock(mutex_);
  if (files_.size() >= kMaxEntries) files_.clear();
  files_[path] = file;
}

ScanMemo& scan_memo() {
  static backend::NoDestructor<ScanMemo> memo;
  return *memo;
}

// Reads a regular file of at most `limit` bytes; false for anything else.
bool read_file(const std::string& path, std::size_t limit, std::string* out, FileIdentity* id) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<std::uint64_t>(st.st_size) <= limit;
  if (ok) {
    *id = identity_of(st);
    out->assign(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < out->size()) {
      const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) ok = false;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    out->resize(done);  // a file that shrank while read: hash what is there
  }
  ::close(fd);
  return ok;
}

}  // namespace hipacm::cache::input_scan
