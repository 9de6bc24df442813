// SPDX-License-Identifier: MIT
// library_fact_memo.h - keeps the backend's remembered compiler-library facts in the user cache.
#pragma once

#include <memory>

#include "hip_backend/library_facts.h"
#include "plugin/cache/store/location.h"

namespace hipacm::cache {

/// The memo a mode hands to arch validation and the compiler identity: the
/// user layer's database, recalled from under READ and READWRITE and written
/// only under READWRITE. nullptr when the policy is OFF or there is no user
/// layer: the facts are then read from the libraries, as without a cache.
/// The system layer is never used: it may come from another machine.
std::shared_ptr<backend::LibraryFactMemo> library_fact_memo(const CacheSettings& settings);

}  // namespace hipacm::cache
