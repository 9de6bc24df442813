// SPDX-License-Identifier: MIT
// scanned_files.h - internal: a file the include scan read, the memo of them, the bounded read.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <boost/thread/mutex.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "plugin/cache/key/include_directives.h"

namespace hipacm::cache::input_scan {

struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return std::tie(device, inode, size, mtime_ns, ctime_ns) ==
           std::tie(o.device, o.inode, o.size, o.mtime_ns, o.ctime_ns);
  }
};

FileIdentity identity_of(const struct stat& st);

struct ScannedFile {
  FileIdentity identity;
  std::string hash;
  std::vector<IncludeName> includes;
};

// Reading and hashing a header is the expensive part of a lookup, and the
// same headers come back for every kernel of a warm-up. A file is reused only
// while its inode, size, mtime and ctime are unchanged; any write to it moves
// ctime, which no user call can set back.
class ScanMemo {
 public:
  bool find(const std::string& path, const FileIdentity& id, ScannedFile* out);
  void put(const std::string& path, const ScannedFile& file);

 private:
  static constexpr std::size_t kMaxEntries = 16384;
  boost::mutex mutex_;
  std::unordered_map<std::string, ScannedFile> files_;
};

/// The process's one memo, shared by every scan; never destroyed.
ScanMemo& scan_memo();

/// What a stat of a path answered (`st`, or null with `stat_errno`), as one comparable string:
/// "absent", "error", "not-a-file", or a regular file's identity. The same answer later means a
/// scan would find there what it found before (the memo reuses a file of the same identity).
std::string stat_state(const struct stat* st, int stat_errno);
/// stat_state of what stat says is at `path` now.
std::string path_state(const std::string& path);

/// Reads a regular file of at most `limit` bytes; false for anything else.
bool read_file(const std::string& path, std::size_t limit, std::string* out, FileIdentity* id);

}  // namespace hipacm::cache::input_scan
