// SPDX-License-Identifier: MIT
// comgr_cache_policy.cpp - hipacm-worker compiles as comgr does by default, but comgr's own
// on-disk cache holds nothing unless the user chose it.
#include "hip_backend/process/comgr_cache_policy.h"

#include "support/environment.h"

namespace hipacm::backend {

bool comgr_cache_chosen_by_user() {
  return environment_value(kComgrCacheVariable).has_value() ||
         environment_value(kComgrCacheDirVariable).has_value();
}

void apply_comgr_cache_policy(std::vector<std::string>* env, bool chosen_by_user) {
  if (chosen_by_user) return;
  // getenv returns the first of duplicate entries: none may stay beside ours.
  for (const char* name : {kComgrCacheVariable, kComgrCacheDirVariable}) {
    const std::string prefix = std::string(name) + "=";
    std::erase_if(*env, [&](const std::string& entry) { return entry.starts_with(prefix); });
  }
  env->push_back(std::string(kComgrCacheDirVariable) + "=" + kComgrUnwritableCacheDir);
}

}  // namespace hipacm::backend
