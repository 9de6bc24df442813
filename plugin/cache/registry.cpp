// SPDX-License-Identifier: MIT
// registry.cpp - the process-wide, lazily opened cache databases, one per path and access.
#include "plugin/cache/registry.h"

#include <boost/thread/lock_guard.hpp>
#include <boost/thread/mutex.hpp>

#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "plugin/cache/store/location.h"
#include "support/failure.h"
#include "support/fork_epoch.h"
#include "support/log.h"

namespace hipacm::cache {
namespace {

struct Slot {
  std::uint64_t generation = 0;
  std::shared_ptr<CacheStore> store;  // null: the location is unusable
};

struct Registry {
  boost::mutex mutex;
  std::map<std::pair<std::string, CacheStore::Access>, Slot> slots;
  // A parent's stores in a forked child: kept alive so their connections
  // are never closed here (that could release the parent's locks or
  // checkpoint its WAL); reclaimed at exit.
  std::vector<std::shared_ptr<CacheStore>> abandoned;
};

Registry& registry() { return ForkGuarded<Registry, ForkRank::kCacheRegistry>::instance(); }

void warn(const std::string& topic, const std::string& message) {
  backend::log_once(backend::LogLevel::kWarning, topic, message);
}

std::shared_ptr<CacheStore> open_store(const std::string& db_path, CacheStore::Access access) {
  const std::string dir = std::filesystem::path(db_path).parent_path().string();
  bool network = false;
  try {
    const std::optional<std::string> fs_name = network_filesystem(dir.empty() ? "." : dir);
    network = fs_name.has_value();
    if (network)
      warn("cache-nfs:" + db_path,
           "the kernel cache " + db_path + " is on " + *fs_name +
               "; using SQLite's rollback journal instead of WAL. Concurrent use from several "
               "hosts relies on the file system's locking (see docs/CACHE.md)");
    if (access == CacheStore::Access::kReadWrite && !dir.empty()) {
      if (Expected<void> prepared = prepare_writable_dir(dir); !prepared) {
        warn("cache-dir:" + db_path, "the kernel cache is unavailable (" +
                                         prepared.failure().message + "); compiling without it");
        return nullptr;
      }
    }
    return CacheStore::open(db_path, access, network);
  } catch (...) {
    warn("cache-open:" + db_path,
         failure_from_current_exception("cannot open the kernel cache").message +
             "; compiling without it");
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<CacheStore> opened_store(const std::string& db_path, CacheStore::Access access) {
  Registry& r = registry();
  boost::lock_guard<boost::mutex> lock(r.mutex);
  auto it = r.slots.find({db_path, access});
  if (it == r.slots.end() || it->second.generation != fork_epoch()) return nullptr;
  return it->second.store;
}

std::shared_ptr<CacheStore> shared_store(const std::string& db_path, CacheStore::Access access) {
  Registry& r = registry();
  const std::uint64_t generation = fork_epoch();
  {
    boost::lock_guard<boost::mutex> lock(r.mutex);
    auto it = r.slots.find({db_path, access});
    if (it != r.slots.end()) {
      if (it->second.generation == generation) return it->second.store;
      if (it->second.store) r.abandoned.push_back(std::move(it->second.store));
      r.slots.erase(it);
    }
  }
  // A read-only layer that does not exist yet may appear later: not remembered.
  std::error_code ec;
  if (access == CacheStore::Access::kReadOnly && !std::filesystem::exists(db_path, ec))
    return nullptr;
  // Opened without the registry lock: an open can wait on another process's
  // lock for the busy timeout. Two threads racing here both open; the first
  // to publish wins and the other connection closes.
  std::shared_ptr<CacheStore> opened = open_store(db_path, access);
  boost::lock_guard<boost::mutex> lock(r.mutex);
  auto [it, inserted] = r.slots.try_emplace({db_path, access}, Slot{generation, opened});
  if (!inserted && it->second.generation != generation) it->second = Slot{generation, opened};
  return it->second.store;
}

}  // namespace hipacm::cache
