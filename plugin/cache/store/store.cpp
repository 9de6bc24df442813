// SPDX-License-Identifier: MIT
// store.cpp - one cache database file: lookups, inserts, LRU eviction, and recovery from damage.
#include "plugin/cache/store/store.h"

#include <boost/thread/lock_guard.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <utility>

#include "plugin/cache/store/name_list.h"
#include "plugin/cache/store/schema.h"
#include "support/log.h"
#include "support/stats.h"

namespace hipacm::cache {
namespace {

// Long enough for another process's insert or eviction to finish; short
// enough that a wedged lock only delays one compile.
constexpr int kBusyTimeoutMs = 5000;

// Buffered hits written per transaction (see touch()).
constexpr std::int64_t kHitsPerFlush = 256;

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

// Rows a scan of a database that is not the user's own (an import, a system
// cache) may list before it is refused as not a plausible cache.
constexpr std::size_t kMaxUntrustedEntries = 1'000'000;

// Real payload bytes, from the values themselves: the size column is written
// for listings by older versions and never trusted (a forged size must not
// evict the cache). length() of a blob reads only the record header.
constexpr const char* kPayloadBytes =
    "(length(code) + length(CAST(log AS BLOB)) + length(CAST(lowered_names AS BLOB)))";

constexpr const char* kFailureColumns =
    "key, arch, source_name, backend, compiler_version, plugin_version, error_message, log, "
    "created_us, last_used_us, checksum";

// Only a row of the expected types and within the bounds is read at all: a
// forged row can neither make a lookup copy large values nor hand back
// values of another type.
constexpr const char* kFailureRowIsSane =
    "typeof(arch)='text' AND typeof(source_name)='text' AND typeof(backend)='text' AND "
    "typeof(compiler_version)='text' AND typeof(plugin_version)='text' AND "
    "typeof(error_message)='text' AND typeof(log)='text' AND typeof(checksum)='text' AND "
    "typeof(created_us)='integer' AND typeof(last_used_us)='integer' AND "
    "max(length(CAST(arch AS BLOB)), length(CAST(source_name AS BLOB)), "
    "length(CAST(backend AS BLOB)), length(CAST(compiler_version AS BLOB)), "
    "length(CAST(plugin_version AS BLOB)), length(CAST(checksum AS BLOB))) <= ?2 AND "
    "length(CAST(error_message AS BLOB)) <= ?3 AND length(CAST(log AS BLOB)) <= ?4";

// The meta rows that hold the recorded hits and misses.
constexpr const char* kHitsCounter = "hits";
constexpr const char* kMissesCounter = "misses";

constexpr const char* kEntryColumns =
    "key, arch, source_name, backend, compiler_version, plugin_version, lowered_names, "
    "expected_kernels, log, size, created_us, last_used_us, hits, checksum, code";

CacheEntry read_entry(const Statement& s) {
  CacheEntry e;
  e.info.key = s.text(0);
  e.info.arch = s.text(1);
  e.info.source_name = s.text(2);
  e.info.backend = s.text(3);
  e.info.compiler_version = s.text(4);
  e.info.plugin_version = s.text(5);
  e.lowered_names = split_names(s.text(6));
  e.expected_kernels = split_names(s.text(7));
  e.log = s.text(8);
  e.info.created_us = s.integer(10);
  e.info.last_used_us = s.integer(11);
  e.info.hits = s.integer(12);
  e.checksum = s.text(13);
  e.code = s.blob(14);
  // Measured from what was read, code object included; the row's own
  // `size` column is never believed.
  e.info.size = payload_size(e);
  return e;
}

StoredFailure read_failure(const Statement& s) {
  StoredFailure f;
  f.key = s.text(0);
  f.arch = s.text(1);
  f.source_name = s.text(2);
  f.backend = s.text(3);
  f.compiler_version = s.text(4);
  f.plugin_version = s.text(5);
  f.error_message = s.text(6);
  f.log = s.text(7);
  f.created_us = s.integer(8);
  f.last_used_us = s.integer(9);
  f.checksum = s.text(10);
  return f;
}

EntryInfo read_info(const Statement& s) {
  EntryInfo i;
  i.key = s.text(0);
  i.arch = s.text(1);
  i.source_name = s.text(2);
  i.backend = s.text(3);
  i.compiler_version = s.text(4);
  i.plugin_version = s.text(5);
  i.size = s.integer(6);
  i.created_us = s.integer(7);
  i.last_used_us = s.integer(8);
  i.hits = s.integer(9);
  return i;
}

// Resets a cached statement however the step loop ends.
struct ResetOnExit {
  Statement& s;
  ~ResetOnExit() { s.reset(); }
};

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

std::vector<std::string> entry_column_names() {
  std::vector<std::string> out;
  const std::string all = kEntryColumns;
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

// SQLite creates a database file 0644 & ~umask and gives its -wal, -shm and
// -journal the database's mode; creating it first, 0600, keeps all of them
// private whatever the umask.
void create_private_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
}

void rename_if_present(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)
    backend::log(backend::LogLevel::kWarning,
                 "cannot move " + from + " aside: " + std::strerror(errno));
}

}  // namespace

std::int64_t now_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

std::int64_t payload_size(const CacheEntry& entry) {
  return static_cast<std::int64_t>(entry.code.size() + entry.log.size() +
                                   join_names(entry.lowered_names).size());
}

std::string moved_aside_name(const std::string& path) {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return path + ".corrupt-" + stamp;
}

void refuse_non_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // missing: SQLite creates it or reports it
  if (S_ISREG(st.st_mode)) return;
  const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "a device";
  throw std::runtime_error(path + " is " + what + ", not a regular file: it cannot be a cache " +
                           "database");
}

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
  find_.reset();
  touch_.reset();
  put_.reset();
  db_.reset();
  if (access_ == Access::kReadWrite) create_private_file(path_);
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
    Transaction tx(db);
    db.exec(kCreateSchema);
    require_cache_layout(db, path_);
    Statement get = db.prepare("SELECT value FROM meta WHERE name='schema_version'");
    if (get.step()) {
      const std::string found = get.text(0);
      if (found != std::to_string(kSchemaVersion))
        throw SqliteError(SQLITE_NOTADB, "schema version " + found + ", expected " +
                                             std::to_string(kSchemaVersion));
    } else {
      db.prepare("INSERT INTO meta(name, value) VALUES('schema_version', ?)")
          .bind(1, std::to_string(kSchemaVersion))
          .step();
    }
    tx.commit();
  } else {
    require_cache_layout(db, path_);
    // Reading the version validates the file before any lookup relies on it.
    Statement get = db.prepare("SELECT value FROM meta WHERE name='schema_version'");
    if (!get.step() || get.text(0) != std::to_string(kSchemaVersion))
      throw SqliteError(SQLITE_NOTADB, path_ + " is not a hipacm cache of schema version " +
                                           std::to_string(kSchemaVersion));
  }
  db_.emplace(std::move(db));
}

void CacheStore::recover_locked(const std::string& why) {
  find_.reset();
  touch_.reset();
  put_.reset();
  db_.reset();
  const std::string aside = moved_aside_name(path_);
  rename_if_present(path_, aside);
  // A damaged database's journal belongs to it; replaying it onto a fresh
  // file would be wrong.
  rename_if_present(path_ + "-wal", aside + "-wal");
  rename_if_present(path_ + "-shm", aside + "-shm");
  rename_if_present(path_ + "-journal", aside + "-journal");
  backend::log(backend::LogLevel::kWarning, "the kernel cache " + path_ + " is damaged (" + why +
                                                "); moved it to " + aside + " and started afresh");
  open_locked();
}

template <typename Fn>
auto CacheStore::locked(Fn&& fn) -> decltype(fn()) {
  boost::lock_guard<boost::mutex> lock(mutex_);
  progress_steps_ = 0;
  try {
    if (!db_) open_locked();
    return fn();
  } catch (const SqliteError& e) {
    if (e.is_corruption() && access_ == Access::kReadWrite) {
      try {
        recover_locked(e.what());
      } catch (...) {
        db_.reset();  // the next call retries the open
      }
    }
    throw;
  }
}

std::optional<CacheEntry> CacheStore::find(const std::string& key) {
  return locked([&]() -> std::optional<CacheEntry> {
    if (!find_)
      find_.emplace(db_->handle(),
                    std::string("SELECT ") + kEntryColumns + " FROM entries WHERE key=?");
    ResetOnExit reset{*find_};
    find_->bind(1, key);
    if (!find_->step()) return std::nullopt;
    return read_entry(*find_);
  });
}

void CacheStore::touch(const std::string& key) {
  locked([&] {
    PendingHit& hit = pending_hits_[key];
    ++hit.count;
    hit.last_used_us = now_us();
    ++pending_hit_count_;
    note_pending_locked();
  });
}

void CacheStore::record_miss() {
  if (access_ != Access::kReadWrite) return;
  locked([&] {
    ++pending_misses_;
    note_pending_locked();
  });
}

void CacheStore::touch_failure(const std::string& key) {
  locked([&] {
    pending_failure_uses_[key] = now_us();
    note_pending_locked();
  });
}

void CacheStore::note_pending_locked() {
  if (++pending_total_ >= kHitsPerFlush) flush_hits_locked();
}

void CacheStore::flush_hits() {
  locked([&] { flush_hits_locked(); });
}

void CacheStore::flush_hits_locked() {
  if (pending_total_ == 0 || access_ != Access::kReadWrite) return;
  // Dropped whatever happens: hit counts are advisory, and a failing write
  // must not make every later hit retry it.
  std::map<std::string, PendingHit> pending;
  pending.swap(pending_hits_);
  std::map<std::string, std::int64_t> failure_uses;
  failure_uses.swap(pending_failure_uses_);
  const std::int64_t hits = std::exchange(pending_hit_count_, 0);
  const std::int64_t misses = std::exchange(pending_misses_, 0);
  pending_total_ = 0;
  if (!touch_)
    touch_.emplace(db_->handle(),
                   "UPDATE entries SET last_used_us=max(last_used_us, ?), hits=hits+? WHERE key=?");
  Transaction tx(*db_);
  for (const auto& [key, hit] : pending) {
    ResetOnExit reset{*touch_};
    touch_->bind(1, hit.last_used_us).bind(2, hit.count).bind(3, key);
    touch_->step();
  }
  if (!failure_uses.empty()) {
    Statement use =
        db_->prepare("UPDATE failures SET last_used_us=max(last_used_us, ?) WHERE key=?");
    for (const auto& [key, last_used_us] : failure_uses) {
      ResetOnExit reset{use};
      use.bind(1, last_used_us).bind(2, key);
      use.step();
    }
  }
  // A value that is not a number (a damaged row) counts from zero again.
  Statement add = db_->prepare(
      "INSERT INTO meta(name, value) VALUES(?1, CAST(?2 AS TEXT)) ON CONFLICT(name) DO UPDATE "
      "SET value=CAST(max(0, CAST(value AS INTEGER)) + ?2 AS TEXT)");
  const std::pair<const char*, std::int64_t> counters[] = {{kHitsCounter, hits},
                                                           {kMissesCounter, misses}};
  for (const auto& [name, amount] : counters) {
    if (amount == 0) continue;
    ResetOnExit reset{add};
    add.bind(1, name).bind(2, amount);
    add.step();
  }
  tx.commit();
}

std::int64_t CacheStore::recorded_counter_locked(const char* name) {
  Statement get = db_->prepare(
      "SELECT max(0, CAST(value AS INTEGER)) FROM meta WHERE name=? AND "
      "typeof(value)='text' AND length(value) <= 20");
  get.bind(1, name);
  return get.step() ? get.integer(0) : 0;
}

std::int64_t CacheStore::recorded_hits() {
  return locked([&] { return recorded_counter_locked(kHitsCounter) + pending_hit_count_; });
}

std::int64_t CacheStore::recorded_misses() {
  return locked([&] { return recorded_counter_locked(kMissesCounter) + pending_misses_; });
}

bool CacheStore::has_table_locked(const char* name) {
  Statement s = db_->prepare("SELECT 1 FROM sqlite_schema WHERE type='table' AND name=?");
  s.bind(1, name);
  return s.step();
}

void CacheStore::put(const CacheEntry& e) {
  locked([&] {
    flush_hits_locked();
    if (!put_)
      put_.emplace(db_->handle(),
                   std::string("INSERT INTO entries(") + kEntryColumns +
                       ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                       "ON CONFLICT(key) DO UPDATE SET arch=excluded.arch, "
                       "source_name=excluded.source_name, backend=excluded.backend, "
                       "compiler_version=excluded.compiler_version, "
                       "plugin_version=excluded.plugin_version, "
                       "lowered_names=excluded.lowered_names, "
                       "expected_kernels=excluded.expected_kernels, log=excluded.log, "
                       "size=excluded.size, last_used_us=excluded.last_used_us, "
                       "checksum=excluded.checksum, code=excluded.code");
    Transaction tx(*db_);
    {
      ResetOnExit reset{*put_};
      put_->bind(1, e.info.key)
          .bind(2, e.info.arch)
          .bind(3, e.info.source_name)
          .bind(4, e.info.backend)
          .bind(5, e.info.compiler_version)
          .bind(6, e.info.plugin_version)
          .bind(7, join_names(e.lowered_names))
          .bind(8, join_names(e.expected_kernels))
          .bind(9, e.log)
          .bind(10, e.info.size)
          .bind(11, e.info.created_us)
          .bind(12, e.info.last_used_us)
          .bind(13, e.info.hits)
          .bind(14, e.checksum)
          .bind_blob(15, e.code.data(), e.code.size());
      put_->step();
    }
    db_->prepare("DELETE FROM failures WHERE key=?").bind(1, e.info.key).step();
    tx.commit();
  });
}

void CacheStore::remove(const std::string& key) {
  locked([&] {
    Transaction tx(*db_);
    db_->prepare("DELETE FROM entries WHERE key=?").bind(1, key).step();
    tx.commit();
  });
}

std::size_t CacheStore::evict_to(std::int64_t max_bytes, const std::string& keep_key) {
  return locked([&] {
    flush_hits_locked();
    Transaction tx(*db_);
    Statement total =
        db_->prepare(std::string("SELECT COALESCE(SUM(") + kPayloadBytes + "), 0) FROM entries");
    total.step();
    std::int64_t bytes = total.integer(0);
    std::size_t removed = 0;
    std::int64_t payload_evicted = 0;
    std::int64_t code_evicted = 0;
    if (bytes > max_bytes) {
      Statement oldest = db_->prepare(std::string("SELECT key, ") + kPayloadBytes +
                                      ", length(code) FROM entries ORDER BY last_used_us, key");
      Statement erase = db_->prepare("DELETE FROM entries WHERE key=?");
      std::vector<std::string> victims;
      while (bytes > max_bytes && oldest.step()) {
        std::string key = oldest.text(0);
        if (key == keep_key) continue;
        bytes -= oldest.integer(1);
        payload_evicted += oldest.integer(1);
        code_evicted += oldest.integer(2);
        victims.push_back(std::move(key));
      }
      oldest.reset();
      for (const auto& key : victims) {
        erase.bind(1, key).step();
        erase.reset();
        ++removed;
      }
    }
    tx.commit();
    if (removed > 0) {
      backend::count(backend::stats().cache_evictions, removed);
      backend::count(backend::stats().bytes_evicted, static_cast<std::uint64_t>(code_evicted));
      backend::log(backend::LogLevel::kInfo,
                   "evicted " + std::to_string(removed) + " least recently used entries (" +
                       std::to_string(payload_evicted) + " bytes, " + std::to_string(code_evicted) +
                       " of them code) from the kernel cache " + path_ + " to keep it within " +
                       std::to_string(max_bytes) + " bytes");
    }
    return removed;
  });
}

std::size_t CacheStore::clear() {
  return locked([&] {
    Transaction tx(*db_);
    db_->exec("DELETE FROM entries");
    const auto n = static_cast<std::size_t>(sqlite3_changes64(db_->handle()));
    db_->exec("DELETE FROM library_facts");
    db_->exec("DELETE FROM failures");
    db_->exec("DELETE FROM meta WHERE name IN ('hits', 'misses')");
    tx.commit();
    pending_hits_.clear();
    pending_failure_uses_.clear();
    pending_hit_count_ = pending_misses_ = pending_total_ = 0;
    return n;
  });
}

std::optional<StoredFailure> CacheStore::find_failure(const std::string& key) {
  return locked([&]() -> std::optional<StoredFailure> {
    // A read-only database from before the table simply misses.
    if (!writable() && !has_table_locked("failures")) return std::nullopt;
    Statement s = db_->prepare(std::string("SELECT ") + kFailureColumns +
                               " FROM failures WHERE key=?1 AND " + kFailureRowIsSane);
    s.bind(1, key)
        .bind(2, static_cast<std::int64_t>(kMaxLabelBytes))
        .bind(3, static_cast<std::int64_t>(kMaxFailureMessageBytes))
        .bind(4, static_cast<std::int64_t>(kMaxFailureLogBytes));
    if (!s.step()) return std::nullopt;
    return read_failure(s);
  });
}

bool CacheStore::put_failure(const StoredFailure& f) {
  return locked([&] {
    flush_hits_locked();
    Transaction tx(*db_);
    // A success under the same key was compiled from the same inputs; it is
    // never shadowed (lookups read entries first) nor doubted by a failure.
    Statement entry = db_->prepare("SELECT 1 FROM entries WHERE key=?");
    entry.bind(1, f.key);
    if (entry.step()) return false;
    db_->prepare(std::string("INSERT INTO failures(") + kFailureColumns +
                 ") VALUES(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                 "arch=excluded.arch, source_name=excluded.source_name, "
                 "backend=excluded.backend, compiler_version=excluded.compiler_version, "
                 "plugin_version=excluded.plugin_version, error_message=excluded.error_message, "
                 "log=excluded.log, created_us=excluded.created_us, "
                 "last_used_us=excluded.last_used_us, checksum=excluded.checksum")
        .bind(1, f.key)
        .bind(2, f.arch)
        .bind(3, f.source_name)
        .bind(4, f.backend)
        .bind(5, f.compiler_version)
        .bind(6, f.plugin_version)
        .bind(7, f.error_message)
        .bind(8, f.log)
        .bind(9, f.created_us)
        .bind(10, f.last_used_us)
        .bind(11, f.checksum)
        .step();
    db_->prepare(
           "DELETE FROM failures WHERE key IN (SELECT key FROM failures "
           "ORDER BY last_used_us DESC, key LIMIT -1 OFFSET ?)")
        .bind(1, kMaxStoredFailures)
        .step();
    tx.commit();
    return true;
  });
}

void CacheStore::remove_failure(const std::string& key) {
  locked([&] {
    Transaction tx(*db_);
    db_->prepare("DELETE FROM failures WHERE key=?").bind(1, key).step();
    tx.commit();
  });
}

std::size_t CacheStore::count_failures() {
  return locked([&]() -> std::size_t {
    if (!has_table_locked("failures")) return 0;
    Statement s = db_->prepare("SELECT COUNT(*) FROM failures");
    s.step();
    return static_cast<std::size_t>(s.integer(0));
  });
}

std::optional<std::string> CacheStore::find_fact(const std::string& key) {
  return locked([&]() -> std::optional<std::string> {
    Statement s = db_->prepare("SELECT value FROM library_facts WHERE key=?");
    s.bind(1, key);
    if (!s.step()) return std::nullopt;
    return s.text(0);
  });
}

void CacheStore::put_fact(const std::string& key, const std::string& value) {
  if (access_ != Access::kReadWrite) return;
  locked([&] {
    Transaction tx(*db_);
    db_->prepare("INSERT OR REPLACE INTO library_facts(key, value, recorded_us) VALUES(?, ?, ?)")
        .bind(1, key)
        .bind(2, value)
        .bind(3, now_us())
        .step();
    tx.commit();
  });
}

std::size_t CacheStore::count_facts() {
  return locked([&] {
    Statement s = db_->prepare("SELECT COUNT(*) FROM library_facts");
    s.step();
    return static_cast<std::size_t>(s.integer(0));
  });
}

std::int64_t CacheStore::total_bytes() {
  return locked([&] {
    Statement s =
        db_->prepare(std::string("SELECT COALESCE(SUM(") + kPayloadBytes + "), 0) FROM entries");
    s.step();
    return s.integer(0);
  });
}

std::vector<ArchTotals> CacheStore::totals_by_arch() {
  return locked([&] {
    std::vector<ArchTotals> out;
    Statement s = db_->prepare(std::string("SELECT arch, COUNT(*), SUM(") + kPayloadBytes +
                               "), SUM(hits) FROM entries GROUP BY arch ORDER BY arch");
    while (s.step()) out.push_back({s.text(0), s.integer(1), s.integer(2), s.integer(3)});
    return out;
  });
}

std::vector<EntryInfo> CacheStore::list(const std::string& arch) {
  return locked([&] {
    std::vector<EntryInfo> out;
    Statement s = db_->prepare(
        std::string("SELECT key, arch, source_name, backend, compiler_version, plugin_version, ") +
        kPayloadBytes +
        ", created_us, last_used_us, hits FROM entries WHERE ?1 = '' OR arch = ?1 "
        "ORDER BY last_used_us DESC, key");
    s.bind(1, arch);
    while (s.step()) out.push_back(read_info(s));
    return out;
  });
}

void CacheStore::for_each(const std::function<void(CacheEntry&&)>& fn, const std::string& arch) {
  // Keys first, then one entry at a time: memory stays at one code object and
  // fn may call back into this store.
  std::vector<std::string> keys = locked([&] {
    std::vector<std::string> out;
    Statement s = db_->prepare("SELECT key FROM entries WHERE ?1 = '' OR arch = ?1 ORDER BY key");
    s.bind(1, arch);
    while (s.step()) {
      if (!writable() && out.size() >= kMaxUntrustedEntries)
        throw SqliteError(SQLITE_TOOBIG, path_ + " holds more than " +
                                             std::to_string(kMaxUntrustedEntries) + " entries");
      out.push_back(s.text(0));
    }
    return out;
  });
  for (const auto& key : keys)
    if (auto entry = find(key)) fn(std::move(*entry));
}

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
  find_.reset();
  touch_.reset();
  put_.reset();
  db_->abandon();
  db_.reset();
}

void CacheStore::execute_for_testing(const std::string& sql) {
  locked([&] { db_->exec(sql); });
}

}  // namespace hipacm::cache
