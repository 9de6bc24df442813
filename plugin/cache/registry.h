// SPDX-License-Identifier: MIT
// registry.h - the process-wide, lazily opened cache databases, one per path and access.
#pragma once

#include <memory>
#include <string>

#include "plugin/cache/store/store.h"

namespace hipacm::cache {

/// The shared store for `db_path`, opened on first use. Read-write opens
/// create the directory; a location that cannot be used logs one warning
/// and yields nullptr (then and on later calls: compile-only). A read-only
/// open of a missing file yields nullptr silently. After fork() a child
/// opens its own connections; the parent's are abandoned, never closed.
std::shared_ptr<CacheStore> shared_store(const std::string& db_path, CacheStore::Access access);

/// The store for `db_path` if this process has already opened it, else nullptr.
std::shared_ptr<CacheStore> opened_store(const std::string& db_path, CacheStore::Access access);

}  // namespace hipacm::cache
