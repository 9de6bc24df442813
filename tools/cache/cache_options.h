// SPDX-License-Identifier: MIT
// cache_options.h - what every `hipacm cache` subcommand is given, and the helpers they share:
// which database, opened how, and the shape of their reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "plugin/cache/cache_admin.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"

namespace hipacm::cli {

struct CacheOptions {
  std::string db;  ///< a database file or a cache directory; empty = the default user cache
  bool json = false;
  bool quiet = false;    ///< -q: the results alone, no headings, totals lines or hints
  bool verbose = false;  ///< -v: whole keys and the compiler of each entry
  std::string arch;
  std::string file;
  std::string max_bytes;  ///< prune: a byte count as parse_byte_size reads it
  bool remove_bad = false;
  bool reset = false;               ///< stats --reset: zero the recorded counters
  int max_code_object_version = 0;  ///< export: 0 = no limit
};

// The database --db names (a directory names the database inside it), else the default one's.
std::string database_path(const CacheOptions& options);
// For import, which may start a cache: a new --db becomes a cache directory unless its name ends
// in .sqlite3 (a bare database file).
cache::CacheAdmin open_cache(const CacheOptions& options);
// An existing cache opened for writing: a missing one is an error, never created.
cache::CacheAdmin open_existing_cache(const CacheOptions& options);
// The cache opened read-only, to look at.
cache::CacheAdmin inspect_cache(const CacheOptions& options);
std::size_t widest(std::size_t at_least, const std::vector<std::string>& texts);
std::string utc_time(std::int64_t us);
// With --json, the subcommand's document: its schema, the cache's path, then `fields`; otherwise
// the text that `print` writes.
void report(const CacheOptions& options, const char* what, const std::string& path,
            const nlohmann::ordered_json& fields, const std::function<void()>& print);

// `cache stats` (cache_stats_command.cpp): the totals and the recorded counters, or with --reset
// the counters zeroed.
int run_stats(const CacheOptions& options);

// Runs a subcommand's `fn` so that cache and remote errors (an unreadable file, a refused
// database or export target) exit 2 with their own message rather than as internal failures.
template <class Fn>
void run_guarded(AppContext& context, Fn fn) {
  try {
    context.exit_code = fn();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(e.what());
  }
}

}  // namespace hipacm::cli
