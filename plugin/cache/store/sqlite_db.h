// SPDX-License-Identifier: MIT
// sqlite_db.h - RAII wrappers for an SQLite connection, its prepared statements and transactions.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hipacm::cache {

/// An SQLite failure with its (extended) result code.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }
  /// The file is not a database or its structure is damaged.
  bool is_corruption() const noexcept {
    const int primary = code_ & 0xff;
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
  }
  /// Another connection holds a lock this one needed.
  bool is_busy() const noexcept {
    const int primary = code_ & 0xff;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
  }

 private:
  int code_;
};

/// A prepared statement; reset on every bind_all()/step cycle by its owner.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::int64_t value);
  Statement& bind_blob(int index, const void* data, std::size_t size);
  /// True while a row is available; false when done. Throws SqliteError.
  bool step();
  void reset() noexcept;

  std::string text(int column) const;
  std::int64_t integer(int column) const;
  std::vector<std::uint8_t> blob(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
  };
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

/// One connection. Closed on destruction unless abandon() was called.
class Database {
 public:
  /// Opens `path` with sqlite3_open_v2 flags (URI filenames allowed).
  Database(const std::string& path, int flags);
  Database(Database&&) noexcept = default;
  Database& operator=(Database&&) noexcept = default;
  ~Database();

  void exec(std::string_view sql);
  Statement prepare(std::string_view sql) { return Statement(db_.get(), sql); }
  sqlite3* handle() const noexcept { return db_.get(); }

  /// Gives up the connection without closing it. For a forked child: closing
  /// the parent's connection there could disturb the parent's locks and WAL.
  void abandon() noexcept { (void)db_.release(); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
};

/// BEGIN IMMEDIATE ... COMMIT; rolls back unless commit() ran. IMMEDIATE takes
/// the write lock up front, so the busy timeout (not a deadlock-prone lock
/// upgrade) decides when two writers meet.
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool open_ = true;
};

/// Throws SqliteError for any result other than OK/ROW/DONE.
void check_sqlite(sqlite3* db, int rc, std::string_view what);

}  // namespace hipacm::cache
