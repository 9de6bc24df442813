// SPDX-License-Identifier: MIT
// comgr_cache_policy.h - hipacm-worker compiles as comgr does by default, but comgr's own on-disk
// cache holds nothing unless the user chose it.
#pragma once

#include <string>
#include <vector>

namespace hipacm::backend {

/// comgr 7.x (ROCm 6.4 and 7.2) caches compile steps in $AMD_COMGR_CACHE_DIR,
/// else $XDG_CACHE_HOME/comgr, else ~/.cache/comgr, unless AMD_COMGR_CACHE is
/// exactly "0". hipacm's cache is the one users manage, and a directory in a
/// user's home is input no key sees. But the switch also changes how comgr
/// compiles: with its cache on (its default), comgr 7.2 preprocesses a source
/// first and compiles the preprocessed text, so a diagnostic quotes the line
/// with its macros expanded (`__attribute__((global))` for `__global__`). A
/// program's own hipRTC compiles so by default, and a worker must give the
/// same log: comgr reads the switch once per process, so the worker runs with
/// the cache on but pointed at a directory that can never exist
/// (kComgrUnwritableCacheDir), where nothing is read or written.
inline constexpr const char* kComgrCacheVariable = "AMD_COMGR_CACHE";
inline constexpr const char* kComgrCacheDirVariable = "AMD_COMGR_CACHE_DIR";
/// Below a character device: no user, root included, can create it.
inline constexpr const char* kComgrUnwritableCacheDir = "/dev/null/hipacm-no-comgr-cache";

/// Whether the user chose comgr's cache: AMD_COMGR_CACHE or AMD_COMGR_CACHE_DIR
/// is set and non-empty, read through environment_value(), so in a privileged
/// host never (comgr itself reads plain getenv, so its variables would reach
/// the worker unfiltered).
bool comgr_cache_chosen_by_user();

/// Applies the policy to a worker's environment ("NAME=value" entries): when
/// the user chose nothing, every AMD_COMGR_CACHE and AMD_COMGR_CACHE_DIR entry
/// goes (an empty one, or one a privileged host ignores) and
/// AMD_COMGR_CACHE_DIR=kComgrUnwritableCacheDir is appended: comgr compiles as
/// it does by default and caches nothing. When the user chose, `env` is left
/// exactly as it is (AMD_COMGR_CACHE=0 compiles as that program's hipRTC does).
void apply_comgr_cache_policy(std::vector<std::string>* env, bool chosen_by_user);

}  // namespace hipacm::backend
