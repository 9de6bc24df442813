// SPDX-License-Identifier: MIT
// child_report.h - ChildReport: the pipe a fork()ed test child writes what it found into.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "support/files/unique_fd.h"

namespace hipacm::test {

/// A close-on-exec pipe made before fork(): the child writes its findings to write_fd(), and the
/// parent reads them all once every writer is gone, its own copy of the write end first (else
/// read_to_end() would never see the end).
class ChildReport {
 public:
  ChildReport() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) {
      read_.reset(fds[0]);
      write_.reset(fds[1]);
    }
  }
  bool ok() const { return read_.valid() && write_.valid(); }
  int write_fd() const { return write_.get(); }
  /// In the child, which only writes.
  void close_read_end() { read_.reset(); }
  /// In the parent: closes its write end and returns all the children wrote.
  std::string read_to_end() {
    write_.reset();
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(read_.get(), buf, sizeof buf)) > 0;) out.append(buf, n);
    return out;
  }

 private:
  backend::UniqueFd read_, write_;
};

}  // namespace hipacm::test
