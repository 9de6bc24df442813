// SPDX-License-Identifier: MIT
// library_fact_memo.h - which backend of the remembered compiler-library facts serves a process:
// the user cache database, else the runtime directory.
#pragma once

#include <memory>

#include "hip_backend/library_facts.h"
#include "plugin/cache/store/location.h"

namespace hipacm::cache {

/// The facts store (backend::LibraryFactMemo) that a process with cache settings `settings`
/// uses, for arch validation at mode enter and for the compiler identity in every cache key: the
/// one place that picks a backend. The user layer's database when the policy reads it
/// (library_fact_memo below), else the runtime directory (backend::runtime_fact_memo), so that a
/// process without a cache still validates its arch without loading the compiler library.
std::shared_ptr<backend::LibraryFactMemo> fact_memo_for(const CacheSettings& settings);

/// The database backend alone: the user layer's database, recalled from under READ and READWRITE
/// and written only under READWRITE. nullptr when the policy is OFF or there is no user layer.
/// The system layer is never used: it may come from another machine.
std::shared_ptr<backend::LibraryFactMemo> library_fact_memo(const CacheSettings& settings);

}  // namespace hipacm::cache
