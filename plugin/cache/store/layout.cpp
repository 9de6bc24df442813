// SPDX-License-Identifier: MIT
// layout.cpp - whether a file is a sound hipacm cache: tables, columns, version, quick_check.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "plugin/cache/store/schema.h"
#include "plugin/cache/store/store.h"
#include "plugin/cache/store/store_internal.h"

namespace hipacm::cache {
namespace {

std::vector<std::string> entry_column_names() {
  std::vector<std::string> out;
  const std::string all = store_internal::kEntryColumns;
  std::size_t start = 0;
  while (start < all.size()) {
    std::size_t end = all.find(',', start);
    if (end == std::string::npos) end = all.size();
    out.push_back(all.substr(start, end - start));
    start = end + 2;
  }
  return out;
}

// Only a real `entries` table with every expected (plain, stored) column is a
// cache: no views or triggers anywhere, no virtual table, no generated
// columns, so that reading it runs no code the file chose.
void require_cache_layout(Database& db, const std::string& path) {
  const auto refuse = [&](const std::string& why) {
    throw SqliteError(SQLITE_NOTADB, path + " is not a hipacm cache: " + why);
  };
  Statement objects = db.prepare("SELECT type, name, COALESCE(sql, '') FROM sqlite_schema");
  bool has_entries = false;
  while (objects.step()) {
    const std::string type = objects.text(0), name = objects.text(1), sql = objects.text(2);
    if (type == "view" || type == "trigger") refuse("it holds a " + type + " (" + name + ")");
    if (name == "entries" || name == "meta" || name == "failures") {
      if (type != "table" || sql.rfind("CREATE TABLE", 0) != 0)
        refuse("'" + name + "' is not a plain table");
      has_entries = has_entries || name == "entries";
    }
  }
  if (!has_entries) refuse("it has no entries table");
  std::vector<std::string> missing = entry_column_names();
  Statement columns = db.prepare("SELECT name, hidden FROM pragma_table_xinfo('entries')");
  while (columns.step()) {
    if (columns.integer(1) != 0) refuse("entries has a generated or hidden column");
    std::erase(missing, columns.text(0));
  }
  if (!missing.empty()) refuse("entries has no column '" + missing.front() + "'");
  // Optional (older databases lack it), but never computed either.
  Statement failure_columns = db.prepare("SELECT hidden FROM pragma_table_xinfo('failures')");
  while (failure_columns.step())
    if (failure_columns.integer(0) != 0) refuse("failures has a generated or hidden column");
}

// The schema version the meta table records, if any.
std::optional<std::string> recorded_schema_version(Database& db) {
  Statement get = db.prepare("SELECT value FROM meta WHERE name='schema_version'");
  if (!get.step()) return std::nullopt;
  return get.text(0);
}

}  // namespace

namespace store_internal {

void prepare_schema(Database& db, const std::string& path, bool create) {
  const std::string expected = std::to_string(kSchemaVersion);
  if (create) {
    Transaction tx(db);
    db.exec(kCreateSchema);
    require_cache_layout(db, path);
    if (const std::optional<std::string> found = recorded_schema_version(db)) {
      if (*found != expected)
        throw SqliteError(SQLITE_NOTADB, "schema version " + *found + ", expected " + expected);
    } else {
      db.prepare("INSERT INTO meta(name, value) VALUES('schema_version', ?)")
          .bind(1, expected)
          .step();
    }
    tx.commit();
  } else {
    require_cache_layout(db, path);
    // Reading the version validates the file before any lookup relies on it.
    if (recorded_schema_version(db) != expected)
      throw SqliteError(SQLITE_NOTADB,
                        path + " is not a hipacm cache of schema version " + expected);
  }
}

}  // namespace store_internal

void CacheStore::quick_check() {
  locked([&] {
    std::string problems;
    try {
      Statement s = db_->prepare("PRAGMA quick_check");
      while (s.step()) {
        const std::string line = s.text(0);
        if (line == "ok") continue;
        if (problems.size() < 512) problems += (problems.empty() ? "" : "; ") + line;
      }
    } catch (const SqliteError& e) {
      // A damaged root page stops the check itself before it can list anything.
      if (!e.is_corruption()) throw;
      problems = e.what();
    }
    if (!problems.empty())
      throw SqliteError(SQLITE_CORRUPT, path_ + " fails SQLite's quick_check: " + problems);
  });
}

}  // namespace hipacm::cache
