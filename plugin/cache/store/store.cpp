// SPDX-License-Identifier: MIT
// store.cpp - a CacheStore's connection: opened hardened, retried while busy, recovered if damaged.
#include "plugin/cache/store/store.h"

#include <boost/thread/lock_guard.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "plugin/cache/store/store_internal.h"
#include "support/log.h"

namespace hipacm::cache {
namespace {

// Long enough for another process's insert or eviction to finish; short
// enough that a wedged lock only delays one compile.
constexpr int kBusyTimeoutMs = 5000;

// The work one store operation may do, in units of kProgressStep SQLite VM
// instructions. A real lookup takes tens; a scan of a large import a few
// million. A hostile file (a view or generated column that expands without
// end) is interrupted instead of running away. The user's own read-write
// cache gets ten times more room for eviction over a huge cache.
constexpr int kProgressStep = 1000;
constexpr std::uint64_t kReadOnlyBudgetSteps = 100'000;
constexpr std::uint64_t kReadWriteBudgetSteps = 1'000'000;

// The largest string or blob any connection will hold: a bound on a single
// code object or log, far above real ones (a few MB), far below what a forged
// row could make SQLite allocate.
constexpr int kMaxValueBytes = 256 << 20;

// Defensive settings for every connection: no writes to sqlite_schema, no
// functions with side effects run from schema objects, and bounded values.
void harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
}

}  // namespace

std::shared_ptr<CacheStore> CacheStore::open(const std::string& path, Access access,
                                             bool network_fs) {
  if (path.rfind("file:", 0) != 0) refuse_non_regular_file(path);
  auto store = std::make_shared<CacheStore>(OpenTag(), path, access, network_fs);
  boost::lock_guard<boost::mutex> lock(store->mutex_);
  try {
    store->open_locked();
  } catch (const SqliteError& e) {
    if (!e.is_corruption() || access != Access::kReadWrite) throw;
    store->recover_locked(e.what());
  }
  return store;
}

CacheStore::CacheStore(OpenTag, std::string path, Access access, bool network_fs)
    : path_(std::move(path)), access_(access), network_fs_(network_fs) {}

// SQLite answers SQLITE_BUSY without calling the busy handler where waiting
// could deadlock: while another connection switches a new file to WAL, runs
// WAL recovery after a crash, or checkpoints as the last one to close. Several
// processes opening one fresh cache meet exactly that, so the whole open is
// retried for as long as the busy timeout would have waited.
void CacheStore::open_locked() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  std::chrono::milliseconds pause(1);
  for (;;) {
    try {
      open_once_locked();
      return;
    } catch (const SqliteError& e) {
      if (!e.is_busy() || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

void CacheStore::open_once_locked() {
  drop_statements_locked();
  db_.reset();
  if (access_ == Access::kReadWrite) store_internal::create_private_file(path_);
  const int flags = access_ == Access::kReadWrite
                        ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
                        : SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
  // Kept in db_ only once fully set up: a failed open leaves no half-ready
  // connection behind for the next call to trip over.
  Database db(path_, flags);
  harden(db.handle());
  sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
  progress_steps_ = 0;
  sqlite3_progress_handler(db.handle(), kProgressStep, &CacheStore::on_progress, this);
  if (access_ == Access::kReadWrite) {
    db.exec(network_fs_ ? "PRAGMA journal_mode=DELETE" : "PRAGMA journal_mode=WAL");
    // In WAL mode NORMAL loses at most the last commits on power loss, never
    // consistency; a lost cache entry is only a recompile.
    db.exec("PRAGMA synchronous=NORMAL");
  }
  store_internal::prepare_schema(db, path_, access_ == Access::kReadWrite);
  db_.emplace(std::move(db));
}

void CacheStore::recover_locked(const std::string& why) {
  drop_statements_locked();
  db_.reset();
  const std::string aside = store_internal::move_aside(path_);
  backend::log(backend::LogLevel::kWarning, "the kernel cache " + path_ + " is damaged (" + why +
                                                "); moved it to " + aside + " and started afresh");
  open_locked();
}

void CacheStore::drop_statements_locked() noexcept {
  find_.reset();
  touch_.reset();
  put_.reset();
}

int CacheStore::on_progress(void* self) noexcept {
  auto* store = static_cast<CacheStore*>(self);
  const std::uint64_t budget = store->writable() ? kReadWriteBudgetSteps : kReadOnlyBudgetSteps;
  return ++store->progress_steps_ > budget ? 1 : 0;
}

void CacheStore::abandon() noexcept {
  boost::lock_guard<boost::mutex> lock(mutex_);
  if (!db_) return;
  // Statements belong to the connection; finalizing them touches only this
  // process's memory, so they go, while the connection itself is abandoned.
  drop_statements_locked();
  db_->abandon();
  db_.reset();
}

void CacheStore::execute_for_testing(const std::string& sql) {
  locked([&] { db_->exec(sql); });
}

}  // namespace hipacm::cache
