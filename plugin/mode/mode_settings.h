// SPDX-License-Identifier: MIT
// mode_settings.h - a mode's resolved configuration: what the host asked for, completed from the
// environment and validated.
#pragma once

#include <hipacm/hipacm.h>

#include <cstdint>
#include <optional>
#include <string>

#include "plugin/cache/remote/remote_settings.h"
#include "plugin/cache/store/location.h"

namespace hipacm {
namespace backend {
class LibraryFactMemo;
}

/// What the host asked for, as plain values (plugin/abi reads them from hipacm_mode_config;
/// fields past the caller's struct keep these defaults). Nothing is validated yet.
struct ModeConfig {
  std::uint32_t max_workers = 0;  ///< 0: one per hardware thread
  bool ignore_errors = false;
  bool fail_fast = false;
  std::optional<std::string> arch;  ///< nullopt: $HIPACM_ARCH, else the device's
  std::int32_t isolation = HIPACM_ISOLATION_AUTO;
  std::uint32_t compile_timeout_ms = 0;
  std::string cache_dir;  ///< empty: resolved from the environment by the cache
  std::int32_t cache_policy = HIPACM_CACHE_DEFAULT;
  std::int32_t load_device = HIPACM_LOAD_NONE;
  bool cache_failures = false;  ///< the negative cache (hipacm_mode_config.cache_failures)
  /// The remote cache's URL (hipacm_mode_config.remote_cache), copied; empty:
  /// $HIPACM_REMOTE_CACHE, and "off": none.
  std::string remote_cache;
  /// An NVIDIA arch is left to the NVRTC of the program whose compiles are served (`hipacm run`):
  /// it may know archs that hipacm's own NVRTC does not, or hipacm may find none of its own.
  bool nvidia_arch_judged_by_program = false;
};

struct ModeSettings {
  unsigned max_workers = 1;
  bool ignore_errors = false;
  bool fail_fast = false;
  std::string arch;  ///< validated
  std::int32_t isolation = HIPACM_ISOLATION_AUTO;
  std::uint32_t compile_timeout_ms = 0;
  /// The persistent cache's policy and locations, and whether it stores and serves failures.
  cache::CacheSettings cache;
  /// The remote tier below the persistent cache; nullopt when none is named, it is `off`, or
  /// the cache's policy is OFF.
  std::optional<cache::remote::RemoteSettings> remote_cache;
  std::int32_t load_device = HIPACM_LOAD_NONE;
  /// Workers to start and warm at mode enter ($HIPACM_PRESTART_WORKERS); 0: none, each starts
  /// when a compile first needs it.
  unsigned prestart_workers = 0;
};

/// $HIPACM_PRESTART_WORKERS for a mode of `max_workers` (prestart_setting.h); throws
/// INVALID_ARGUMENT for a malformed value.
unsigned resolve_prestart_workers(unsigned max_workers);

/// Applies defaults and the environment, and validates: the worker count, the isolation, cache
/// and load_device values, the cache settings, the remote cache's URL, then the arch. Throws
/// hipacm::StatusError: INVALID_ARGUMENT (unknown arch, bad isolation, malformed remote cache URL,
/// ...), BACKEND_UNAVAILABLE (no arch could be found).
ModeSettings resolve_mode_settings(const ModeConfig& config);

/// The isolation policy: `requested` unless it is AUTO, then
/// $HIPACM_ISOLATION (auto|in-process|process), then AUTO. Throws
/// INVALID_ARGUMENT for an unknown value in either place.
std::int32_t resolve_isolation(std::int32_t requested);

/// The arch a mode or hipacm_compile uses: `requested` if given, else
/// $HIPACM_ARCH, else the device's; validated against the compiler's list, except an NVIDIA arch
/// with `nvidia_arch_judged_by_program` (ModeConfig's). `memo` may supply the list and hipRTC's
/// identity (library_facts.h).
std::string resolve_arch(const std::optional<std::string>& requested,
                         backend::LibraryFactMemo* memo = nullptr,
                         bool nvidia_arch_judged_by_program = false);

}  // namespace hipacm
