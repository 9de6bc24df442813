// SPDX-License-Identifier: MIT
// runtime_dir.h - this user's private per-machine directory, shared by every hipacm process.
#pragma once

#include <string>

#include "support/failure.h"

namespace hipacm::backend {

/// The file that marks a directory as hipacm's runtime directory.
inline constexpr const char* kRuntimeDirMarker = ".hipacm-runtime-dir";

/// Where the runtime directory is, and what became of the default place.
struct RuntimeDirChoice {
  /// The directory to use. An explicit HIPACM_RUNTIME_DIR is used as given (its users check it
  /// with make_runtime_directory and refuse it); a default place that cannot be used is replaced
  /// by the fallback under the user's home.
  std::string path;
  /// The default place that was passed over ("" when it was used or HIPACM_RUNTIME_DIR chose),
  /// and why: another user made it, it is a link, open to others, or holds foreign files.
  std::string passed_over;
  std::string passed_over_because;
};

/// $HIPACM_RUNTIME_DIR, else $XDG_RUNTIME_DIR/hipacm, else /tmp/hipacm-<euid>. When that default
/// cannot be used (anyone can make /tmp/hipacm-<uid> first), the fallback_runtime_dir() instead.
/// Makes the directory it picks, as make_runtime_directory does.
RuntimeDirChoice choose_runtime_dir();

/// choose_runtime_dir().path. Holds the machine-wide worker budget's slots, the compile
/// service's socket, the runtime-header PCH store and the remembered library facts.
std::string runtime_dir_from_environment();

/// ${XDG_CACHE_HOME:-$HOME/.cache}/hipacm/run-<host name>: a place no other user can take first.
/// The host name keeps machines that share a home apart; a long one is hashed, so that the
/// compile service's socket path still fits a Unix socket address. "" without a home.
std::string fallback_runtime_dir();

/// Makes `dir` (mode 0700) if it is missing, then accepts it only as a real directory of this
/// user that no one else may write to: a slot or a socket in a directory that another user
/// controls could be held or answered against us. The Failure (INTERNAL) says what was wrong.
Expected<void> make_private_directory(const std::string& dir);

/// make_private_directory(), and the directory must be dedicated to hipacm: no permission bits
/// for group or others, and either made by hipacm (it carries kRuntimeDirMarker) or holding
/// nothing but what hipacm puts there (then it is marked and adopted). A directory with other
/// files in it (/, a home, a project) is refused, so hipacm never scatters its files there.
Expected<void> make_runtime_directory(const std::string& dir);

}  // namespace hipacm::backend
