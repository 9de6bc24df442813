// SPDX-License-Identifier: MIT
// runtime_dir.h - this user's private per-machine directory, shared by every hipacm process.
#pragma once

#include <string>

namespace hipacm::backend {

/// $HIPACM_RUNTIME_DIR, else $XDG_RUNTIME_DIR/hipacm, else /tmp/hipacm-<euid>. Holds the
/// machine-wide worker budget's slots and the compile service's socket.
std::string runtime_dir_from_environment();

/// Makes `dir` (mode 0700) if it is missing, then accepts it only as a real directory of this
/// user that no one else may write to: a slot or a socket in a directory that another user
/// controls could be held or answered against us. *why says what was wrong.
bool make_private_directory(const std::string& dir, std::string* why);

}  // namespace hipacm::backend
