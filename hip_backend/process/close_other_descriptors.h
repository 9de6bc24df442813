// SPDX-License-Identifier: MIT
// close_other_descriptors.h - the posix_spawn file action that closes, in the child, every
// descriptor above its fixed ones.
#pragma once

#include <spawn.h>

namespace hipacm::backend {

/// Adds to `actions` the closing, in the child, of every descriptor above `highest_fixed`.
/// glibc 2.34+ has closefrom as a file action; older glibc gets one close action per descriptor
/// that is open now (a descriptor opened concurrently by another thread without O_CLOEXEC could
/// slip through there; that is the host's bug). False when the actions cannot be added.
bool add_close_above(posix_spawn_file_actions_t* actions, int highest_fixed);

}  // namespace hipacm::backend
