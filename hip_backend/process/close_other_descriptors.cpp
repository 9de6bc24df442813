// SPDX-License-Identifier: MIT
// close_other_descriptors.cpp - closing a spawned child's descriptors above its fixed ones:
// closefrom where glibc has it, else one close per descriptor open now.
#include "hip_backend/process/close_other_descriptors.h"

#include <dirent.h>

#include <cstdlib>

namespace hipacm::backend {

bool add_close_above(posix_spawn_file_actions_t* actions, int highest_fixed) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  return posix_spawn_file_actions_addclosefrom_np(actions, highest_fixed + 1) == 0;
#else
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return false;
  const int own = dirfd(dir);
  bool ok = true;
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd > highest_fixed && fd != own) {
      ok = ok && posix_spawn_file_actions_addclose(actions, fd) == 0;
    }
  }
  closedir(dir);
  return ok;
#endif
}

}  // namespace hipacm::backend
