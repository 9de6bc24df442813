// mode_settings.h - a mode's resolved configuration, read from hipacm_mode_config and the
// environment.
#pragma once

#include <hipacm/hipacm.h>

#include <cstdint>
#include <string>

namespace hipacm {
namespace backend {
class LibraryFactMemo;
}

struct ModeSettings {
  unsigned max_workers = 1;
  bool ignore_errors = false;
  bool fail_fast = false;
  std::string arch;  ///< validated
  std::int32_t isolation = HIPACM_ISOLATION_AUTO;
  std::uint32_t compile_timeout_ms = 0;
  std::string cache_dir;  ///< empty: resolved from the environment by the cache
  std::int32_t cache_policy = HIPACM_CACHE_DEFAULT;  ///< as requested; the cache resolves DEFAULT
  std::int32_t load_device = HIPACM_LOAD_NONE;
};

/// Applies defaults, reads only the fields inside cfg->struct_size, and
/// resolves and validates the arch. Throws hipacm::StatusError: ABI_MISMATCH,
/// INVALID_ARGUMENT (unknown arch, bad isolation), BACKEND_UNAVAILABLE (no
/// arch could be found).
ModeSettings resolve_mode_settings(const hipacm_mode_config* cfg);

/// hipacm_compile's settings: the defaults, with `arch` resolved as a mode's
/// arch field is (NULL: $HIPACM_ARCH or the device's).
ModeSettings resolve_compile_settings(const char* arch);

/// The isolation policy: `requested` unless it is AUTO, then
/// $HIPACM_ISOLATION (auto|in-process|process), then AUTO. Throws
/// INVALID_ARGUMENT for an unknown value in either place.
std::int32_t resolve_isolation(std::int32_t requested);

/// The arch a mode or hipacm_compile uses: `requested` if non-NULL, else
/// $HIPACM_ARCH, else the device's; validated against the compiler's list.
/// `memo` may supply the list and hipRTC's identity (library_facts.h).
std::string resolve_arch(const char* requested, backend::LibraryFactMemo* memo = nullptr);

}  // namespace hipacm
