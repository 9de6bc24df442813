// SPDX-License-Identifier: MIT
// negative_cache_test.cpp - stored compile failures (cache_failures): stored, served without
// compiling, bounded, never exported, cleared, and ignored when damaged.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "plugin/abi/mode_config_reader.h"
#include "plugin/abi/struct_versions.h"
#include "plugin/cache/cache_admin.h"
#include "plugin/cache/integrity.h"
#include "plugin/cache/store/store.h"
#include "support/stats.h"
#include "tests/plugin/cache/cache_test_support.h"

namespace hipacm::cache_test {
namespace {

using cache::CacheStore;

// A missing ';' after the assignment: hipRTC reports a compilation error.
std::string broken_source(const std::string& name = "broken") {
  return "extern \"C\" __global__ void " + name + "(float* x) { x[0] = 1.0f }\n";
}

CompileSpec failing_spec(const std::string& name = "broken") {
  CompileSpec spec;
  spec.source = broken_source(name);
  spec.cache_failures = true;
  return spec;
}

bool is_cached_failure(const Outcome& outcome) {
  return outcome.error_message.find("cached failure") != std::string::npos;
}

std::size_t stored_failures(const std::string& db) {
  if (!std::filesystem::exists(db)) return 0;
  return CacheStore::open(db, CacheStore::Access::kReadOnly)->count_failures();
}

std::uint64_t cached_failures_counted() {
  return backend::stats().cached_failures.load(std::memory_order_relaxed);
}

// Compiles the broken `spec` twice into a fresh `dir`: a spec that never stores its failure
// compiles both times and leaves no failure behind.
void expect_compiled_twice_unstored(const TempDir& dir, const CompileSpec& spec,
                                    const CountingFactory& counter) {
  ASSERT_EQ(compile_in_mode(dir.path(), spec).status, HIPACM_ERROR_COMPILATION);
  ASSERT_EQ(compile_in_mode(dir.path(), spec).status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(counter.compiles.load(), 2);
  EXPECT_EQ(stored_failures(dir.db()), 0u);
}

/// Returns a fixed outcome instead of compiling: for the outcomes a real compile of a broken
/// kernel never gives (a timeout, a crash, a failure of a request that compiles).
class FixedOutcomeCompiler final : public backend::Compiler {
 public:
  FixedOutcomeCompiler(hipacm_status status, std::atomic<int>* count)
      : status_(status), count_(count) {}
  backend::CompileResult compile(const backend::CompileRequest&) override {
    count_->fetch_add(1, std::memory_order_relaxed);
    backend::CompileResult result;
    result.status = status_;
    result.error_message = "injected";
    result.log = "injected log";
    return result;
  }

 private:
  hipacm_status status_;
  std::atomic<int>* count_;
};

class FixedOutcomeFactory {
 public:
  explicit FixedOutcomeFactory(hipacm_status status) {
    set_compiler_factory_for_testing([this, status](const ModeSettings&) {
      return std::make_shared<FixedOutcomeCompiler>(status, &compiles);
    });
  }
  FixedOutcomeFactory(const FixedOutcomeFactory&) = delete;
  FixedOutcomeFactory& operator=(const FixedOutcomeFactory&) = delete;
  ~FixedOutcomeFactory() { set_compiler_factory_for_testing({}); }
  std::atomic<int> compiles{0};
};

class NegativeCache : public CacheEnvironment {};

TEST_F(NegativeCache, FailureIsStoredThenServedWithoutCompiling) {
  TempDir dir;
  CountingFactory counter;
  const std::uint64_t served_before = cached_failures_counted();
  const Outcome first = compile_in_mode(dir.path(), failing_spec());
  ASSERT_EQ(first.enter_status, HIPACM_SUCCESS);
  ASSERT_EQ(first.status, HIPACM_ERROR_COMPILATION);
  EXPECT_FALSE(is_cached_failure(first)) << first.error_message;
  EXPECT_FALSE(first.log.empty());
  EXPECT_EQ(counter.compiles.load(), 1);
  EXPECT_EQ(stored_failures(dir.db()), 1u);

  const Outcome second = compile_in_mode(dir.path(), failing_spec());
  EXPECT_EQ(second.status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(counter.compiles.load(), 1) << "a stored failure must not run the compiler";
  EXPECT_TRUE(is_cached_failure(second)) << second.error_message;
  EXPECT_NE(second.error_message.find(first.error_message), std::string::npos);
  EXPECT_NE(second.error_message.find("hipacm cache clear"), std::string::npos);
  EXPECT_NE(second.error_message.find("cache_failures"), std::string::npos);
  EXPECT_EQ(second.log, first.log);
  EXPECT_EQ(cached_failures_counted() - served_before, 1u);
  // Failures live beside the entries, never among them.
  EXPECT_EQ(cache::CacheAdmin::open(dir.db()).list().size(), 0u);
}

TEST_F(NegativeCache, StoredFailureIsNotServedWhenTheFieldIsOff) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  CompileSpec off = failing_spec();
  off.cache_failures = false;
  const Outcome outcome = compile_in_mode(dir.path(), off);
  EXPECT_EQ(outcome.status, HIPACM_ERROR_COMPILATION);
  EXPECT_FALSE(is_cached_failure(outcome)) << outcome.error_message;
  EXPECT_EQ(counter.compiles.load(), 2);
  EXPECT_EQ(stored_failures(dir.db()), 1u) << "a failure is stored only with the field on";
}

TEST_F(NegativeCache, OffByDefaultNothingIsStored) {
  TempDir dir;
  CountingFactory counter;
  CompileSpec off = failing_spec();
  off.cache_failures = false;
  ASSERT_NO_FATAL_FAILURE(expect_compiled_twice_unstored(dir, off, counter));
}

TEST_F(NegativeCache, ReadPolicyServesButNeverStores) {
  TempDir dir;
  CountingFactory counter;
  CompileSpec read = failing_spec();
  read.policy = HIPACM_CACHE_READ;
  ASSERT_NO_FATAL_FAILURE(expect_compiled_twice_unstored(dir, read, counter));

  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  EXPECT_EQ(counter.compiles.load(), 3);
  const Outcome served = compile_in_mode(dir.path(), read);
  EXPECT_EQ(served.status, HIPACM_ERROR_COMPILATION);
  EXPECT_TRUE(is_cached_failure(served)) << served.error_message;
  EXPECT_EQ(counter.compiles.load(), 3);
}

TEST_F(NegativeCache, OnlyCompilationErrorsAreStored) {
  TempDir dir;
  for (const hipacm_status status : {HIPACM_ERROR_TIMEOUT, HIPACM_ERROR_COMPILER_CRASHED,
                                     HIPACM_ERROR_CANCELLED, HIPACM_ERROR_OUT_OF_MEMORY}) {
    SCOPED_TRACE(hipacm_status_string(status));
    FixedOutcomeFactory injected(status);
    EXPECT_EQ(compile_in_mode(dir.path(), failing_spec()).status, status);
    EXPECT_EQ(compile_in_mode(dir.path(), failing_spec()).status, status);
    EXPECT_EQ(injected.compiles.load(), 2);
    EXPECT_EQ(stored_failures(dir.db()), 0u);
  }
}

TEST_F(NegativeCache, ASuccessReplacesAStoredFailureAndIsNeverShadowed) {
  TempDir dir;
  CompileSpec good;
  good.cache_failures = true;
  {
    // A request that compiles, failing once (as a flaky compiler might).
    FixedOutcomeFactory injected(HIPACM_ERROR_COMPILATION);
    ASSERT_EQ(compile_in_mode(dir.path(), good).status, HIPACM_ERROR_COMPILATION);
  }
  ASSERT_EQ(stored_failures(dir.db()), 1u);

  CompileSpec good_off = good;
  good_off.cache_failures = false;
  Outcome compiled;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(dir.path(), good_off, &compiled));
  EXPECT_EQ(stored_failures(dir.db()), 0u) << "the stored success disproves the failure";

  CountingFactory counter;
  const Outcome hit = compile_in_mode(dir.path(), good);
  EXPECT_EQ(hit.status, HIPACM_SUCCESS);
  EXPECT_TRUE(hit.from_cache);
  EXPECT_EQ(hit.code, compiled.code);
  EXPECT_EQ(counter.compiles.load(), 0);
}

TEST_F(NegativeCache, AFailureNeverGoesUnderTheKeyOfAStoredSuccess) {
  TempDir dir;
  Outcome compiled;
  ASSERT_NO_FATAL_FAILURE(compile_afresh(dir.path(), {}, &compiled));
  auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
  const auto entries = store->list();
  ASSERT_EQ(entries.size(), 1u);

  cache::StoredFailure failure;
  failure.key = entries[0].key;
  failure.arch = kArch;
  failure.error_message = "raced";
  failure.checksum = cache::failure_checksum(failure);
  EXPECT_FALSE(store->put_failure(failure)) << "another process's failure raced a success";
  EXPECT_EQ(store->count_failures(), 0u);
  EXPECT_TRUE(store->find(entries[0].key).has_value());

  CountingFactory counter;
  CompileSpec on;
  on.cache_failures = true;
  const Outcome hit = compile_in_mode(dir.path(), on);
  EXPECT_EQ(hit.status, HIPACM_SUCCESS);
  EXPECT_TRUE(hit.from_cache);
  EXPECT_EQ(counter.compiles.load(), 0);
}

TEST_F(NegativeCache, ClearRemovesStoredFailures) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  ASSERT_EQ(stored_failures(dir.db()), 1u);
  cache::CacheAdmin::open(dir.db()).clear();
  EXPECT_EQ(stored_failures(dir.db()), 0u);
  const Outcome again = compile_in_mode(dir.path(), failing_spec());
  EXPECT_EQ(again.status, HIPACM_ERROR_COMPILATION);
  EXPECT_FALSE(is_cached_failure(again));
  EXPECT_EQ(counter.compiles.load(), 2);
}

TEST_F(NegativeCache, ExportLeavesStoredFailuresOut) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  ASSERT_EQ(compile_in_mode(dir.path()).status, HIPACM_SUCCESS);
  ASSERT_EQ(stored_failures(dir.db()), 1u);
  TempDir exported;
  const std::string file = exported.path() + "/export.sqlite3";
  EXPECT_EQ(cache::CacheAdmin::open(dir.db()).export_to(file), 1u);
  EXPECT_EQ(stored_failures(file), 0u);

  // Nor does an import bring any into a cache.
  TempDir other;
  const std::string other_db = other.path() + "/" + cache::kDatabaseFileName;
  EXPECT_EQ(cache::CacheAdmin::open(other_db).import_from(dir.db()).accepted, 1);
  EXPECT_EQ(stored_failures(other_db), 0u);
}

// Each statement damages the stored row in a different way; each time the row is ignored
// (the compiler runs and reports the failure afresh) and a good row takes its place.
TEST_F(NegativeCache, DamagedRowsAreIgnored) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec("other")).status, HIPACM_ERROR_COMPILATION);
  ASSERT_EQ(stored_failures(dir.db()), 2u);
  int expected_compiles = 2;
  const char* damage[] = {
      "UPDATE failures SET log = log || 'tampered'",
      "UPDATE failures SET error_message = 'tampered'",
      "UPDATE failures SET arch = 'gfx1030'",
      "UPDATE failures SET compiler_version = 'another compiler'",
      "UPDATE failures SET checksum = 'bad'",
      "UPDATE failures SET log = CAST(log AS BLOB)",
      "UPDATE failures SET log = zeroblob(100000)",
      "UPDATE failures SET log = printf('%.*c', 70000, 'x')",
      "UPDATE failures SET error_message = printf('%.*c', 5000, 'x')",
      "UPDATE failures SET source_name = printf('%.*c', 5000, 'x')",
      "UPDATE failures SET created_us = 'yesterday'",
      "UPDATE failures SET last_used_us = NULL",
      "UPDATE failures SET arch = NULL",
  };
  for (const char* sql : damage) {
    SCOPED_TRACE(sql);
    const std::string scoped = std::string(sql) + " WHERE key = (SELECT min(key) FROM failures)";
    {
      auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
      if (std::string(sql).find("NULL") != std::string::npos) {
        // The schema says NOT NULL; a file from elsewhere need not: the same rows in a table
        // without the constraints.
        store->execute_for_testing(
            "BEGIN; CREATE TABLE f2 AS SELECT * FROM failures; DROP TABLE failures; "
            "CREATE TABLE failures(key TEXT PRIMARY KEY, arch, source_name, backend, "
            "compiler_version, plugin_version, error_message, log, created_us, last_used_us, "
            "checksum); INSERT INTO failures SELECT * FROM f2; DROP TABLE f2; COMMIT");
      }
      store->execute_for_testing(scoped);
    }
    // Both requests: one row is damaged, the other must still be served.
    const Outcome broken = compile_in_mode(dir.path(), failing_spec());
    const Outcome other = compile_in_mode(dir.path(), failing_spec("other"));
    EXPECT_EQ(broken.status, HIPACM_ERROR_COMPILATION);
    EXPECT_EQ(other.status, HIPACM_ERROR_COMPILATION);
    const int damaged_served =
        (is_cached_failure(broken) ? 0 : 1) + (is_cached_failure(other) ? 0 : 1);
    EXPECT_EQ(damaged_served, 1) << "exactly the damaged row is ignored";
    expected_compiles += 1;
    EXPECT_EQ(counter.compiles.load(), expected_compiles);
    EXPECT_EQ(stored_failures(dir.db()), 2u) << "the damaged row was replaced";
    // The replacement serves again.
    EXPECT_TRUE(is_cached_failure(compile_in_mode(dir.path(), failing_spec())));
    EXPECT_TRUE(is_cached_failure(compile_in_mode(dir.path(), failing_spec("other"))));
    EXPECT_EQ(counter.compiles.load(), expected_compiles);
  }
}

TEST_F(NegativeCache, ARowCopiedUnderAnotherKeyIsNotServed) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec("other")).status, HIPACM_ERROR_COMPILATION);
  // Every column but the key from the first row onto the second.
  {
    auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
    store->execute_for_testing(
        "UPDATE failures SET (arch, source_name, backend, compiler_version, plugin_version, "
        "error_message, log, created_us, last_used_us, checksum) = (SELECT arch, source_name, "
        "backend, compiler_version, plugin_version, error_message, log, created_us, "
        "last_used_us, checksum FROM failures AS f WHERE f.key <> failures.key) "
        "WHERE key = (SELECT min(key) FROM failures)");
  }
  const Outcome broken = compile_in_mode(dir.path(), failing_spec());
  const Outcome other = compile_in_mode(dir.path(), failing_spec("other"));
  EXPECT_EQ((is_cached_failure(broken) ? 0 : 1) + (is_cached_failure(other) ? 0 : 1), 1);
  EXPECT_EQ(counter.compiles.load(), 3);
}

TEST_F(NegativeCache, LongLogsAreStoredTruncated) {
  TempDir dir;
  CountingFactory counter;
  // Thousands of errors, each a line or more of log: far past the stored bound.
  std::string source;
  for (int i = 0; i < 3000; ++i)
    source += "int value_" + std::to_string(i) + " = undeclared_" + std::to_string(i) + ";\n";
  CompileSpec spec = failing_spec();
  spec.source = source;
  spec.options = {"-ferror-limit=0"};
  const Outcome first = compile_in_mode(dir.path(), spec);
  ASSERT_EQ(first.status, HIPACM_ERROR_COMPILATION);
  ASSERT_GT(first.log.size(), cache::kMaxFailureLogBytes) << "the caller gets the whole log";
  const Outcome second = compile_in_mode(dir.path(), spec);
  ASSERT_TRUE(is_cached_failure(second)) << second.error_message;
  EXPECT_LE(second.log.size(), cache::kMaxFailureLogBytes);
  EXPECT_EQ(first.log.compare(0, 1000, second.log, 0, 1000), 0) << "the head is kept";
  EXPECT_NE(second.log.find("truncated by the kernel cache"), std::string::npos);
  EXPECT_EQ(counter.compiles.load(), 1);
}

TEST_F(NegativeCache, StoredFailuresAreCapped) {
  TempDir dir;
  auto store = CacheStore::open(dir.db(), CacheStore::Access::kReadWrite);
  const std::int64_t extra = 10;
  for (std::int64_t i = 0; i < cache::kMaxStoredFailures + extra; ++i) {
    cache::StoredFailure failure;
    char key[65];
    std::snprintf(key, sizeof key, "%064llx", static_cast<unsigned long long>(i));
    failure.key = key;
    failure.arch = kArch;
    failure.created_us = failure.last_used_us = 1000 + i;
    failure.checksum = cache::failure_checksum(failure);
    ASSERT_TRUE(store->put_failure(failure));
  }
  EXPECT_EQ(store->count_failures(), static_cast<std::size_t>(cache::kMaxStoredFailures));
  // The least recently used went.
  char oldest[65];
  std::snprintf(oldest, sizeof oldest, "%064llx", 0ULL);
  EXPECT_FALSE(store->find_failure(oldest).has_value());
  char newest[65];
  std::snprintf(newest, sizeof newest, "%064llx",
                static_cast<unsigned long long>(cache::kMaxStoredFailures + extra - 1));
  EXPECT_TRUE(store->find_failure(newest).has_value());
}

TEST_F(NegativeCache, ADatabaseWithoutTheTableSimplyMisses) {
  TempDir dir;
  CountingFactory counter;
  ASSERT_EQ(compile_in_mode(dir.path(), failing_spec()).status, HIPACM_ERROR_COMPILATION);
  // As a database from before the table (read under READ, where nothing creates it).
  CacheStore::open(dir.db(), CacheStore::Access::kReadWrite)
      ->execute_for_testing("DROP TABLE failures");
  CompileSpec read = failing_spec();
  read.policy = HIPACM_CACHE_READ;
  const Outcome outcome = compile_in_mode(dir.path(), read);
  EXPECT_EQ(outcome.status, HIPACM_ERROR_COMPILATION);
  EXPECT_FALSE(is_cached_failure(outcome));
  EXPECT_EQ(counter.compiles.load(), 2);
  EXPECT_EQ(stored_failures(dir.db()), 0u);
}

TEST(NegativeCacheConfig, TheFieldIsReadOnlyInsideStructSize) {
  hipacm_mode_config cfg;
  hipacm_mode_config_init(&cfg);
  EXPECT_EQ(cfg.cache_failures, 0);
  EXPECT_FALSE(read_mode_config(&cfg).cache_failures);
  cfg.cache_failures = 1;
  EXPECT_TRUE(read_mode_config(&cfg).cache_failures);
  // A host built against the 1.2 header: the bytes past its struct are not its own.
  cfg.struct_size = kModeConfigV3Size;
  EXPECT_FALSE(read_mode_config(&cfg).cache_failures);
}

}  // namespace
}  // namespace hipacm::cache_test
