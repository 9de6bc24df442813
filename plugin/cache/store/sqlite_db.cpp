// SPDX-License-Identifier: MIT
// sqlite_db.cpp - RAII wrappers for an SQLite connection, its prepared statements and transactions.
#include "plugin/cache/store/sqlite_db.h"

namespace hipacm::cache {

void check_sqlite(sqlite3* db, int rc, std::string_view what) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  // Only the store's progress handler interrupts a statement.
  if ((rc & 0xff) == SQLITE_INTERRUPT)
    message += " (the statement exceeded the work any real cache needs; the file is refused)";
  const int code = db != nullptr ? sqlite3_extended_errcode(db) : rc;
  throw SqliteError(code, message);
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  stmt_.reset(raw);
  check_sqlite(db, rc, "preparing a cache statement");
}

Statement& Statement::bind(int index, std::string_view text) {
  check_sqlite(db_,
               sqlite3_bind_text(stmt_.get(), index, text.data(), static_cast<int>(text.size()),
                                 SQLITE_TRANSIENT),
               "binding text");
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_sqlite(db_, sqlite3_bind_int64(stmt_.get(), index, value), "binding an integer");
  return *this;
}

Statement& Statement::bind_blob(int index, const void* data, std::size_t size) {
  check_sqlite(db_, sqlite3_bind_blob64(stmt_.get(), index, data, size, SQLITE_TRANSIENT),
               "binding a blob");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  check_sqlite(db_, rc, "running a cache statement");
  return false;
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_.get(), column);
  const int n = sqlite3_column_bytes(stmt_.get(), column);
  return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
}

std::int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

std::vector<std::uint8_t> Statement::blob(int column) const {
  const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_.get(), column));
  const int n = sqlite3_column_bytes(stmt_.get(), column);
  return p == nullptr ? std::vector<std::uint8_t>() : std::vector<std::uint8_t>(p, p + n);
}

Database::Database(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_URI, nullptr);
  db_.reset(raw);
  if (rc != SQLITE_OK) {
    const std::string why = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    throw SqliteError(rc, "cannot open " + path + ": " + why);
  }
  sqlite3_extended_result_codes(raw, 1);
}

Database::~Database() = default;

void Database::exec(std::string_view sql) {
  const std::string owned(sql);
  check_sqlite(db_.get(), sqlite3_exec(db_.get(), owned.c_str(), nullptr, nullptr, nullptr), owned);
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!open_) return;
  // After SQLITE_FULL and similar, SQLite may already have rolled back.
  if (sqlite3_get_autocommit(db_.handle()) == 0)
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace hipacm::cache
