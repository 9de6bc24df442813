// SPDX-License-Identifier: MIT
// cache_checks.cpp - what the cache fuzz targets do with a database file once it exists.
#include "tests/fuzz/cache_checks.h"

#include <exception>
#include <filesystem>
#include <string_view>

#include "plugin/cache/cache_admin.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/store/store.h"
#include "tests/fuzz/fuzz_input.h"

namespace hipacm::fuzz {
namespace {

namespace fs = std::filesystem;
using cache::CacheAdmin;
using cache::CacheEntry;
using cache::CacheStore;

void require_message(const std::exception& e, std::string_view where) {
  if (std::string_view(e.what()).empty())
    invariant_broken(std::string(where) + " failed without a message");
}

void import_into_fresh_cache(const std::string& file, const std::string& target) {
  try {
    CacheAdmin cache = CacheAdmin::open(target);
    const cache::ImportReport report = cache.import_from(file);
    for (const cache::EntryInfo& info : cache.list()) {
      const std::optional<CacheEntry> entry = cache.lookup(info.key);
      if (!entry) invariant_broken("a listed entry cannot be looked up");
      if (const auto valid = cache::validate_entry(*entry, ""); !valid)
        invariant_broken("an imported entry fails validation: " + valid.failure().message);
      if (entry->info.size != cache::payload_size(*entry))
        invariant_broken("an imported entry keeps a size of " + std::to_string(entry->info.size) +
                         " for a payload of " + std::to_string(cache::payload_size(*entry)));
    }
    if (static_cast<std::int64_t>(cache.list().size()) != report.accepted)
      invariant_broken("the import report does not match what was stored");
  } catch (const std::exception& e) {
    require_message(e, "import");
  }
}

void read_as_system_cache(const std::string& file) {
  try {
    CacheAdmin cache = CacheAdmin::open_read_only(file);
    (void)cache.stats();
    for (const cache::EntryInfo& info : cache.list()) (void)cache.lookup(info.key);
    (void)cache.verify(false);
  } catch (const std::exception& e) {
    require_message(e, "read-only open");
  }
}

void open_as_user_cache(const std::string& file, const std::string& copy) {
  // libFuzzer's timeout timer is a SIGALRM without SA_RESTART, and copy_file does not retry a
  // copy it interrupts: an interrupted copy is tried again, any other failure is the harness's.
  std::error_code ec;
  for (int attempt = 0; attempt < 100; ++attempt) {
    ec.clear();
    fs::copy_file(file, copy, fs::copy_options::overwrite_existing, ec);
    if (ec != std::errc::interrupted) break;
  }
  if (ec) invariant_broken("cannot copy " + file + ": " + ec.message());
  try {
    auto store = CacheStore::open(copy, CacheStore::Access::kReadWrite);
    for (const cache::EntryInfo& info : store->list()) {
      if (auto entry = store->find(info.key)) store->touch(entry->info.key);
    }
    store->flush_hits();
    (void)store->evict_to(0);
  } catch (const std::exception& e) {
    require_message(e, "read-write open");
  }
}

}  // namespace

void exercise_cache_file(const std::string& file, const std::string& import_target,
                         const std::string& writable_copy) {
  import_into_fresh_cache(file, import_target);
  read_as_system_cache(file);
  open_as_user_cache(file, writable_copy);
}

}  // namespace hipacm::fuzz
