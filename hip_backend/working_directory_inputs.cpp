// SPDX-License-Identifier: MIT
// working_directory_inputs.cpp - the files hipRTC's compiler driver reads from the working
// directory of its own accord, and the check that keeps an in-process compile that may have read
// one out of the cache.
#include "hip_backend/working_directory_inputs.h"

#include <sys/stat.h>

namespace hipacm::backend {

std::string driver_input_in_working_directory() {
  for (const char* name : kDriverWorkingDirectoryNames) {
    // lstat: any entry counts, a dangling link or a FIFO too, and none is opened.
    struct stat st {};
    if (::lstat(name, &st) == 0) return name;
  }
  return {};
}

WorkingDirectoryWatch::WorkingDirectoryWatch() {
  struct stat st {};
  known_ = ::stat(".", &st) == 0;
  device_ = st.st_dev;
  inode_ = st.st_ino;
  found_ = driver_input_in_working_directory();
}

std::string WorkingDirectoryWatch::verdict() const {
  std::string found = found_.empty() ? driver_input_in_working_directory() : found_;
  if (!found.empty())
    return "the working directory holds " + found +
           ", which hipRTC's compiler driver reads without the request naming it";
  struct stat st {};
  if (!known_ || ::stat(".", &st) != 0 || st.st_dev != device_ || st.st_ino != inode_)
    return "the working directory changed or could not be read while the compiler ran";
  return {};
}

}  // namespace hipacm::backend
