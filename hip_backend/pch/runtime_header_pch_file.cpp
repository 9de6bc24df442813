// SPDX-License-Identifier: MIT
// runtime_header_pch_file.cpp - the plausibility check on a runtime-header PCH file.
#include "hip_backend/pch/runtime_header_pch_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "support/files/private_file.h"
#include "support/files/unique_fd.h"

namespace hipacm::backend {

int open_plausible_pch(const std::string& path, std::size_t* size) {
  // Never blocks: a FIFO planted where a PCH belongs is refused, not waited on.
  struct stat st {};
  UniqueFd fd = open_private_file(path, O_RDONLY, S_IFREG, &st);
  if (!fd.valid() || st.st_size < static_cast<off_t>(sizeof kPchMagic) ||
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
