// SPDX-License-Identifier: MIT
// cache_location.h - where the persistent cache lives, by the documented resolution order.
#pragma once

#include <string>

namespace hipacm::cli {

struct CacheLocation {
  std::string path;  ///< "" when nothing could be resolved (no HOME)
  /// What chose it: "--cache-dir", the cache directory's variable, "XDG_CACHE_HOME" or "HOME".
  std::string source;
  bool exists = false;
  bool writable = false;   ///< writable, or creatable under its nearest existing parent
  std::string problem;     ///< why not writable
  std::string database;    ///< the SQLite file inside `path`
  std::string network_fs;  ///< "nfs", "cifs", ... when `path` is on a network file system
};

/// `explicit_dir` when non-empty, else $HIPACM_CACHE_DIR, else
/// $XDG_CACHE_HOME/hipacm, else $HOME/.cache/hipacm: the cache library's own
/// resolution, the same as for hipacm_mode_config.cache_dir.
CacheLocation resolve_cache_location(const std::string& explicit_dir);

}  // namespace hipacm::cli
