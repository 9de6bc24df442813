// SPDX-License-Identifier: MIT
// location.h - where the caches live and how they may be used, from the mode and the environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "support/failure.h"
#include "support/settings.h"

namespace hipacm::cache {

/// How a mode uses the cache: kOff, kRead or kReadWrite. The type of $HIPACM_CACHE's setting, so
/// that the mode's DEFAULT takes the setting without a translation.
using Policy = settings::CachePolicy;

/// Where and how a mode uses the cache; resolved once at mode enter.
struct CacheSettings {
  Policy policy = Policy::kOff;
  std::string user_db;    ///< read-write layer's database; empty: none
  std::string system_db;  ///< read-only layer's database; empty: none
  std::int64_t max_bytes = 0;
  /// The negative cache: store compile failures (READWRITE) and serve them (READ, READWRITE).
  bool cache_failures = false;
  /// The mode's per-compile limit (0: none). Waiting for another process's compile of the same
  /// kernel stands in for compiling it, so the wait counts against the limit too.
  std::uint32_t compile_timeout_ms = 0;
};

/// The policy (`requested_policy` as resolve_policy reads it) and the locations: the user layer
/// in `mode_dir` or the user_cache_dir() default, the system layer, the size bound. Throws
/// hipacm::StatusError (INVALID_ARGUMENT) for a bad policy or $HIPACM_CACHE.
CacheSettings resolve_cache_settings(std::int32_t requested_policy, const std::string& mode_dir);

/// HIPACM_CACHE_OFF/READ/READWRITE as given; HIPACM_CACHE_DEFAULT reads
/// $HIPACM_CACHE (off|read|readwrite), else READWRITE. Throws hipacm::StatusError
/// (INVALID_ARGUMENT) for an unknown value in either place.
Policy resolve_policy(std::int32_t requested);

/// The read-write cache directory: `mode_dir` if not empty, else
/// $HIPACM_CACHE_DIR, else $XDG_CACHE_HOME/hipacm, else $HOME/.cache/hipacm.
/// Empty when none can be derived.
std::string user_cache_dir(const std::string& mode_dir);

/// The database file inside a cache directory.
std::string database_in(const std::string& dir);

/// $HIPACM_SYSTEM_CACHE as a database path (a directory names the database
/// inside it); empty when unset.
std::string system_cache_path();

/// $HIPACM_CACHE_MAX_BYTES (bytes, or with a unit: "512M", "1.5G", "100KiB";
/// see parse_byte_size), else 2 GiB. A malformed value logs one warning and
/// uses the default.
std::int64_t max_cache_bytes();

/// The name of the network file system (NFS, SMB/CIFS, ...) that `path` (or its nearest
/// existing parent) is on; nullopt when it is on none.
std::optional<std::string> network_filesystem(const std::string& path);

/// Whether the existing directory `dir` may hold a cache this process writes; the failure
/// (INVALID_ARGUMENT) says why not: it must be a directory (a link to one counts as what it
/// names) owned by this user and writable by no one else, or another user could plant or swap
/// the database or its -wal, -shm, -journal and claims files beside it.
Expected<void> check_cache_dir(const std::string& dir);

/// Creates `dir` and its parents (mode 0700 for new ones). Fails (INVALID_ARGUMENT, naming the
/// directory) when it cannot, when it is not a writable directory, or when check_cache_dir()
/// finds it is not this user's alone.
Expected<void> prepare_writable_dir(const std::string& dir);

}  // namespace hipacm::cache
