// SPDX-License-Identifier: MIT
// comgr_cache_policy.h - comgr's own on-disk cache is off in hipacm-worker unless the user chose
// it.
#pragma once

#include <string>
#include <vector>

namespace hipacm::backend {

/// comgr 7.x (ROCm 6.4 and 7.2) caches compile steps in $AMD_COMGR_CACHE_DIR,
/// else $XDG_CACHE_HOME/comgr, else ~/.cache/comgr, unless AMD_COMGR_CACHE is
/// exactly "0". hipacm's cache is the one users manage; in a worker, comgr's
/// keys also hold the worker's private TMPDIR, so each new worker writes
/// entries that no later worker finds.
inline constexpr const char* kComgrCacheVariable = "AMD_COMGR_CACHE";
inline constexpr const char* kComgrCacheDirVariable = "AMD_COMGR_CACHE_DIR";

/// Whether the user chose comgr's cache: AMD_COMGR_CACHE or AMD_COMGR_CACHE_DIR
/// is set and non-empty, read through environment_value(), so in a privileged
/// host never (comgr itself reads plain getenv, so its variables would reach
/// the worker unfiltered).
bool comgr_cache_chosen_by_user();

/// Applies the policy to a worker's environment ("NAME=value" entries): when
/// the user chose nothing, every AMD_COMGR_CACHE entry goes (an empty one, or
/// one a privileged host ignores) and AMD_COMGR_CACHE=0 is appended; when the
/// user chose, `env` is left exactly as it is.
void apply_comgr_cache_policy(std::vector<std::string>* env, bool chosen_by_user);

}  // namespace hipacm::backend
