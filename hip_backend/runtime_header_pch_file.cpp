// SPDX-License-Identifier: MIT
// runtime_header_pch_file.cpp - the plausibility check on a runtime-header PCH file.
#include "hip_backend/runtime_header_pch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "support/unique_fd.h"

namespace hipacm::backend {

int open_plausible_pch(const std::string& path, std::size_t* size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid() || st.st_size < static_cast<off_t>(sizeof kPchMagic) ||
      static_cast<std::size_t>(st.st_size) > kMaxRuntimeHeaderPchBytes)
    return -1;
  char magic[sizeof kPchMagic];
  if (::pread(fd.get(), magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic) ||
      std::memcmp(magic, kPchMagic, sizeof magic) != 0)
    return -1;
  *size = static_cast<std::size_t>(st.st_size);
  return fd.release();
}

}  // namespace hipacm::backend
