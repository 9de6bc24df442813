// SPDX-License-Identifier: MIT
// cache_command.cpp - `hipacm cache stats|list|verify|prune|clear|export|import`: the user cache.
#include <fmt/core.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hip_backend/codeobject/amdgpu_target.h"
#include "plugin/cache/cache_admin.h"
#include "support/bytes/byte_size.h"
#include "support/settings.h"
#include "tools/cache/cache_options.h"
#include "tools/cache/cache_remote.h"
#include "tools/common/commands.h"
#include "tools/common/exit_codes.h"
#include "tools/common/json_output.h"
#include "tools/common/option_checks.h"
#include "tools/common/terminal_text.h"

namespace hipacm::cli {

// The database --db names (a directory names the database inside it), else the default one's.
std::string database_path(const CacheOptions& options) {
  if (options.db.empty()) {
    const std::string path = cache::CacheAdmin::default_path();
    if (path.empty())
      throw InputError(
          fmt::format("no cache location: set {} (or XDG_CACHE_HOME or HOME), or pass --db FILE",
                      settings::name(settings::Id::kCacheDir)));
    return path;
  }
  std::error_code ec;
  return std::filesystem::is_directory(options.db, ec) ? cache::CacheAdmin::path_in(options.db)
                                                       : options.db;
}

// For import, which may start a cache. A --db that does not exist yet becomes a new cache
// directory (what --cache-dir, HIPACM_CACHE_DIR and hosts take), unless its name ends in
// .sqlite3, which names a bare database file: never a file where a directory was meant.
cache::CacheAdmin open_cache(const CacheOptions& options) {
  if (!options.db.empty()) {
    std::error_code ec;
    const auto type = std::filesystem::symlink_status(options.db, ec).type();
    if (type == std::filesystem::file_type::symlink && !std::filesystem::exists(options.db, ec))
      throw InputError(
          fmt::format("--db {}: a symbolic link to nothing; name a cache directory "
                      "or database file",
                      printable(options.db)));
    if (type == std::filesystem::file_type::not_found &&
        !std::filesystem::path(options.db).filename().string().ends_with(".sqlite3"))
      return cache::CacheAdmin::open(cache::CacheAdmin::path_in(options.db));
  }
  return cache::CacheAdmin::open(database_path(options));
}

// For commands that change or copy a cache that must already be there: a typo in --db must not
// leave an empty cache behind.
cache::CacheAdmin open_existing_cache(const CacheOptions& options) {
  const std::string path = database_path(options);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(
        fmt::format("no cache at {}: there is no database file there (nothing was "
                    "created)",
                    printable(path)));
  return cache::CacheAdmin::open(path);
}

// For commands that only look: never creates a cache, and works where it may not write.
cache::CacheAdmin inspect_cache(const CacheOptions& options) {
  return cache::CacheAdmin::inspect(database_path(options));
}

std::size_t widest(std::size_t at_least, const std::vector<std::string>& texts) {
  for (const std::string& text : texts) at_least = std::max(at_least, text.size());
  return at_least;
}

std::string utc_time(std::int64_t us) {
  const std::time_t seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

// With --json, the subcommand's document: its schema, the cache's path, then `fields`; otherwise
// the text that `print` writes.
void report(const CacheOptions& options, const char* what, const std::string& path,
            const nlohmann::ordered_json& fields, const std::function<void()>& print) {
  if (!options.json) return print();
  nlohmann::ordered_json out = {{"schema", fmt::format("hipacm-cache-{}-1", what)}, {"path", path}};
  out.update(fields);
  write_json(out, "-");
}

namespace {

// Entries the store refused: verify's bad ones, import's rejected ones.
nlohmann::ordered_json refused_json(const std::vector<cache::RejectedEntry>& entries) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const cache::RejectedEntry& bad : entries)
    list.push_back({{"key", bad.key}, {"reason", bad.reason}});
  return list;
}

void print_refused(const char* label, const std::vector<cache::RejectedEntry>& entries) {
  for (const cache::RejectedEntry& bad : entries)
    fmt::print("{}  {}  {}\n", label, printable(bad.key), printable(bad.reason));
}

int run_list(const CacheOptions& options) {
  cache::CacheAdmin admin = inspect_cache(options);
  const std::vector<cache::EntryInfo> entries = admin.list(options.arch);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const cache::EntryInfo& e : entries) {
    nlohmann::ordered_json row;
    cache::for_each_label(e,
                          [&](const char* name, const std::string& label) { row[name] = label; });
    row["size"] = e.size;
    row["created_us"] = e.created_us;
    row["last_used_us"] = e.last_used_us;
    row["hits"] = e.hits;
    rows.push_back(std::move(row));
  }
  report(options, "list", admin.path(), {{"entries", rows}}, [&] {
    // Keys, archs and names come from the database, which an import may have written. 16 hex
    // digits identify an entry in practice (inspect takes a prefix); -v and --json have all. The
    // source name, of any length, comes last so that it never pushes the columns apart.
    std::vector<std::string> keys, archs;
    for (const cache::EntryInfo& e : entries) {
      keys.push_back(printable(options.verbose ? e.key : e.key.substr(0, 16)));
      archs.push_back(printable(e.arch));
    }
    const std::size_t key_width = widest(3, keys), arch_width = widest(4, archs);
    if (!options.quiet)
      fmt::print("{:<{}}  {:<{}}  {:>10} {:>6}  {:<19}  {}\n", "key", key_width, "arch", arch_width,
                 "size", "hits", "last used (UTC)", "source");
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const cache::EntryInfo& e = entries[i];
      fmt::print("{:<{}}  {:<{}}  {:>10} {:>6}  {:<19}  {}{}\n", keys[i], key_width, archs[i],
                 arch_width, human_bytes(e.size), e.hits, utc_time(e.last_used_us),
                 printable(e.source_name),
                 options.verbose
                     ? fmt::format("  [{} {}]", printable(e.backend), printable(e.compiler_version))
                     : "");
    }
    if (!options.quiet) fmt::print("{} entries in {}\n", entries.size(), printable(admin.path()));
  });
  return kExitOk;
}

int run_verify(const CacheOptions& options) {
  cache::CacheAdmin admin = open_existing_cache(options);
  const cache::VerifyReport result = admin.verify(options.remove_bad);
  report(
      options, "verify", admin.path(),
      {{"checked", result.checked}, {"removed", result.removed}, {"bad", refused_json(result.bad)}},
      [&] {
        print_refused("bad", result.bad);
        fmt::print("{} entries checked, {} bad, {} removed\n", result.checked, result.bad.size(),
                   result.removed);
        if (!result.bad.empty() && !options.remove_bad && !options.quiet)
          fmt::print("run 'hipacm cache verify --remove' to delete the bad entries\n");
      });
  // Bad entries that are still there are a failure; removed ones are repaired.
  return result.bad.empty() || options.remove_bad ? kExitOk : kExitFailures;
}

int run_prune(const CacheOptions& options) {
  const std::int64_t max_bytes = byte_size_option("--max-bytes", options.max_bytes);
  cache::CacheAdmin admin = open_existing_cache(options);
  const std::size_t removed = admin.prune(max_bytes);
  const cache::CacheStats after = admin.stats();
  report(options, "prune", admin.path(),
         {{"removed", removed}, {"entries", after.entries}, {"payload_bytes", after.total_bytes}},
         [&] {
           fmt::print("removed {} least-recently-used entries; {} entries, {} left\n", removed,
                      after.entries, human_bytes(after.total_bytes));
         });
  return kExitOk;
}

int run_clear(const CacheOptions& options) {
  cache::CacheAdmin admin = open_existing_cache(options);
  const std::size_t removed = admin.clear();
  report(options, "clear", admin.path(), {{"removed", removed}},
         [&] { fmt::print("removed {} entries from {}\n", removed, admin.path()); });
  return kExitOk;
}

// Why entries of code-object version `version` were left out, or what to know about exporting
// them.
std::string version_reason(int version, int limit) {
  const std::string note = backend::code_object_runtime_note(version);
  const std::string above = fmt::format("above --max-code-object-version {}", limit);
  return note.empty() ? above : above + "; " + note;
}

nlohmann::ordered_json version_counts(const std::map<int, std::size_t>& counts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [version, count] : counts)
    out[version == 0 ? std::string("none") : std::to_string(version)] = count;
  return out;
}

// Without a limit, entries that older runtimes cannot load are exported with a warning.
std::vector<std::string> export_warnings(const cache::ExportReport& result, int limit) {
  std::vector<std::string> warnings;
  if (limit > 0) return warnings;
  for (const auto& [version, count] : result.exported_by_version) {
    const std::string note = backend::code_object_runtime_note(version);
    if (note.empty()) continue;
    warnings.push_back(fmt::format(
        "{} exported entries hold code object v{}: {}; pass --max-code-object-version {} to "
        "leave them out",
        count, version, note, version - 1));
  }
  return warnings;
}

int run_export(const CacheOptions& options) {
  cache::CacheAdmin admin = open_existing_cache(options);
  const cache::ExportReport result =
      admin.export_entries(options.file, {options.arch, options.max_code_object_version});
  const std::vector<std::string> warnings =
      export_warnings(result, options.max_code_object_version);
  for (const std::string& warning : warnings) fmt::print(stderr, "warning: {}\n", warning);
  nlohmann::ordered_json left_out = nlohmann::ordered_json::array();
  for (const auto& [version, count] : result.left_out_by_version)
    left_out.push_back({{"code_object_version", version},
                        {"entries", count},
                        {"reason", version_reason(version, options.max_code_object_version)}});
  report(options, "export", admin.path(),
         {{"file", options.file},
          {"arch", options.arch},
          {"exported", result.exported},
          {"max_code_object_version", options.max_code_object_version},
          {"code_object_versions", version_counts(result.exported_by_version)},
          {"left_out", left_out},
          {"warnings", warnings}},
         [&] {
           fmt::print("exported {} entries{} to {}\n", result.exported,
                      options.arch.empty() ? "" : fmt::format(" for {}", options.arch),
                      options.file);
           if (result.left_out() == 0) return;
           fmt::print("left out {} entries:\n", result.left_out());
           for (const auto& [version, count] : result.left_out_by_version)
             fmt::print("  {} with code object v{}: {}\n", count, version,
                        version_reason(version, options.max_code_object_version));
         });
  return kExitOk;
}

int run_import(const CacheOptions& options) {
  // SQLite would block on a FIFO and read a device without end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(options.file, ec))
    throw InputError(
        fmt::format("{}: not a regular file (an export written by 'hipacm cache export')",
                    printable(options.file)));
  cache::CacheAdmin admin = open_cache(options);
  const cache::ImportReport result = admin.import_from(options.file);
  report(options, "import", admin.path(),
         {{"file", options.file},
          {"accepted", result.accepted},
          {"duplicates", result.duplicates},
          {"rejected", refused_json(result.rejected)}},
         [&] {
           print_refused("rejected", result.rejected);
           fmt::print("imported {} entries ({} already present, {} rejected) into {}\n",
                      result.accepted, result.duplicates, result.rejected.size(), admin.path());
         });
  return result.rejected.empty() ? kExitOk : kExitFailures;
}

}  // namespace

void add_cache_command(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<CacheOptions>();
  CLI::App* cache_cmd = app.add_subcommand(
      "cache", "Show, check, shrink, export and import the persistent kernel cache");
  cache_cmd->require_subcommand(1);
  add_non_empty_option(cache_cmd, "--db", options->db,
                       "A cache directory or database file (default: the user cache, see "
                       "'hipacm doctor'); stats and list only read it, and create nothing; "
                       "import into a new path makes a cache directory (a bare database file "
                       "when the name ends in .sqlite3)");
  cache_cmd->footer(examples_footer(
      {"hipacm cache stats",
       "hipacm cache export gfx90a.hipacm --arch gfx90a && hipacm cache import gfx90a.hipacm"},
      "0 ok, 1 bad entries found (verify) or rejected (import), 2 usage error, or a cache "
      "that cannot be read, or written where the command writes (stats --reset too)."));

  auto add = [&](const char* name, const char* help, const char* example,
                 int (*run)(const CacheOptions&)) {
    CLI::App* sub = cache_cmd->add_subcommand(name, help);
    sub->add_flag("--json", options->json, "Print a JSON document instead of text");
    sub->footer(fmt::format("Example:\n  {}", example));
    sub->callback([options, &context, run] {
      options->quiet = context.quiet;
      options->verbose = context.verbose;
      run_guarded(context, [&] { return run(*options); });
    });
    return sub;
  };

  add("stats",
      "Entries, size and its bound, hits, misses, errors and passthroughs, and totals by arch "
      "(read-only; --reset zeroes the counts)",
      "hipacm cache stats", run_stats)
      ->add_flag("--reset", options->reset,
                 "Zero the recorded hits, misses, errors and passthroughs and the entries' hit "
                 "counts (the entries themselves are kept)");
  add("list", "Every entry, most recently used first (read-only)",
      "hipacm cache list --arch gfx90a", run_list)
      ->add_option("--arch", options->arch, "Only entries for this arch");
  add("verify", "Re-check every entry: checksum, code object, arch", "hipacm cache verify --remove",
      run_verify)
      ->add_flag("--remove", options->remove_bad, "Delete the entries that fail");
  add("prune", "Evict least-recently-used entries down to a size",
      "hipacm cache prune --max-bytes 1G", run_prune)
      ->add_option("--max-bytes", options->max_bytes,
                   "Payload to keep at most: bytes, or with K, M, G or T (powers of 1024): 512M, "
                   "1.5G")
      ->required();
  add("clear", "Remove every entry", "hipacm cache clear", run_clear);
  CLI::App* exp = add("export", "Write the cache (or one arch of it) to one file",
                      "hipacm cache export kernels.hipacm --arch gfx90a", run_export);
  exp->add_option("file", options->file, "The file to create (must not exist)")->required();
  exp->add_option("--arch", options->arch, "Only entries for this arch");
  exp->add_option("--max-code-object-version", options->max_code_object_version,
                  "Leave out AMDGPU code objects above this version (v6 needs ROCm 6.3's runtime "
                  "or newer)")
      ->check(CLI::Range(backend::kMinCodeObjectVersion, backend::kMaxCodeObjectVersion));
  add("import", "Merge an exported file; every entry is validated first",
      "hipacm cache import kernels.hipacm", run_import)
      ->add_option("file", options->file, "A file written by 'hipacm cache export'")
      ->required();
  add_cache_remote_command(cache_cmd, options, context);
}

}  // namespace hipacm::cli
