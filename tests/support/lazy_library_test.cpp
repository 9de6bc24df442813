// SPDX-License-Identifier: MIT
// lazy_library_test.cpp - LazyLibrary and its search: the override, the order of candidates, the
// missing-symbol message, reuse of a loaded library, and one load per process.
#include "support/libraries/lazy_library.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace hipacm::backend {
namespace {

// Sets or unsets one environment variable for a scope.
class EnvOverride {
 public:
  EnvOverride(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;
  ~EnvOverride() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

struct StringApi {
  std::size_t (*strlen)(const char*) = nullptr;
  int (*no_such)(void) = nullptr;
  std::string library_path;
};

void bind_strlen(SymbolBinder& binder, StringApi* api) {
  binder.require("strlen", &api->strlen);
  binder.optional("hipacm_no_such_symbol", &api->no_such);
}

void bind_missing(SymbolBinder& binder, StringApi* api) {
  binder.require("hipacm_no_such_symbol", &api->no_such);
  binder.require("strlen", &api->strlen);
}

LibrarySearch test_search() {
  return {.name = "Test",
          .override_variable = "HIPACM_TEST_LIBRARY",
          .defaults = {"libhipacm-no-such-library.so", "libc.so.6"}};
}

TEST(LazyLibrary, OverrideReplacesTheDefaults) {
  {
    EnvOverride env("HIPACM_TEST_LIBRARY", "/opt/x/libtest.so");
    EXPECT_EQ(test_search().candidates(), std::vector<std::string>{"/opt/x/libtest.so"});
  }
  EnvOverride env("HIPACM_TEST_LIBRARY", "");
  EXPECT_EQ(test_search().candidates(), test_search().defaults);
}

TEST(LazyLibrary, StopsAtTheFirstCandidateThatOpensAndRecordsWhere) {
  auto found = find_library(test_search(), test_search().defaults, &bind_strlen);
  ASSERT_TRUE(found.has_value()) << found.failure().message;
  EXPECT_EQ(found->candidate, "libc.so.6");
  EXPECT_EQ(found->api.library_path, found->library.path());
  EXPECT_EQ(found->api.library_path.front(), '/') << found->api.library_path;
  EXPECT_EQ(found->api.strlen("four"), 4u);
  EXPECT_EQ(found->api.no_such, nullptr);  // optional: missing is fine
}

TEST(LazyLibrary, NothingOpensNamesEveryCandidateAndTheOverride) {
  auto found =
      find_library(test_search(), {"/nonexistent/a.so", "/nonexistent/b.so"}, &bind_strlen);
  ASSERT_FALSE(found.has_value());
  const Failure& failure = found.failure();
  EXPECT_EQ(failure.status, HIPACM_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(failure.message.rfind("cannot open Test (tried 2 libraries: ", 0), 0u)
      << failure.message;
  EXPECT_NE(failure.message.find("/nonexistent/a.so"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("/nonexistent/b.so"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("; set HIPACM_TEST_LIBRARY to its path"), std::string::npos)
      << failure.message;
}

TEST(LazyLibrary, MissingSymbolNamesTheSymbolAndTheFile) {
  auto found = find_library(test_search(), {"libc.so.6", "libm.so.6"}, &bind_missing);
  ASSERT_FALSE(found.has_value());
  const std::string& message = found.failure().message;
  EXPECT_EQ(message.rfind("Test library /", 0), 0u) << message;
  EXPECT_NE(message.find("libc"), std::string::npos) << message;
  EXPECT_NE(message.find(" is missing symbol hipacm_no_such_symbol ("), std::string::npos)
      << message;
  EXPECT_EQ(message.find("libm"), std::string::npos) << "a later candidate was tried: " << message;
}

TEST(LazyLibrary, PreferLoadedReusesWhatTheProcessHas) {
  constexpr const char* kUnloaded = "libanl.so.1";  // a glibc library nothing here links
  if (DynamicLibrary::open_if_loaded(kUnloaded))
    GTEST_SKIP() << kUnloaded << " is already loaded in this process";
  LibrarySearch search = test_search();
  search.lifetime = DynamicLibrary::Lifetime::kUnloadable;
  search.prefer_loaded = true;
  const std::vector<std::string> candidates = {kUnloaded, "libc.so.6"};
  {
    auto found = find_library(search, candidates, &bind_strlen);
    ASSERT_TRUE(found.has_value()) << found.failure().message;
    EXPECT_EQ(found->candidate, "libc.so.6");
  }
  search.prefer_loaded = false;
  auto found = find_library(search, candidates, &bind_strlen);
  ASSERT_TRUE(found.has_value()) << found.failure().message;
  EXPECT_EQ(found->candidate, kUnloaded);
}

std::atomic<int> g_loads{0};

Expected<BoundLibrary<StringApi>> counted_load() {
  ++g_loads;
  return find_library(test_search(), {"libc.so.6"}, &bind_strlen);
}

TEST(LazyLibrary, LoadsOnceHoweverManyThreadsAsk) {
  const LazyLibrary<StringApi> library("cannot load Test", &counted_load);
  std::vector<const StringApi*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      const Expected<const StringApi*> api = library.api();
      seen[i] = api ? api.value() : nullptr;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(g_loads.load(), 1);
  ASSERT_NE(seen[0], nullptr);
  for (const StringApi* api : seen) EXPECT_EQ(api, seen[0]);
  const Expected<const StringApi*> again = library.api();
  EXPECT_EQ(again ? again.value() : nullptr, seen[0]);
  EXPECT_TRUE(again.has_value()) << "a loaded library reports no failure";
}

TEST(LazyLibrary, AFailedLoadIsRememberedWithItsMessage) {
  static constexpr LibrarySpec<StringApi> kMissing = {
      [] { return LibrarySearch{.name = "Test", .defaults = {"/nonexistent/libtest.so"}}; },
      &bind_strlen};
  const LazyLibrary<StringApi> library("cannot load Test", kMissing);
  const Expected<BoundLibrary<StringApi>>& first = library.get();
  EXPECT_FALSE(first.has_value());
  const std::string error = first ? std::string() : first.failure().message;
  EXPECT_EQ(error.rfind("cannot open Test (tried 1 libraries: ", 0), 0u) << error;
  EXPECT_EQ(error.find("; set "), std::string::npos) << "no override to suggest: " << error;
  const Expected<BoundLibrary<StringApi>>& second = library.get();
  EXPECT_FALSE(second.has_value());
  const std::string again = second ? std::string() : second.failure().message;
  EXPECT_EQ(again, error);
}

TEST(LazyLibrary, AnExceptionFromTheLoadBecomesAMessage) {
  const LazyLibrary<StringApi> library(
      "cannot load Test",
      []() -> Expected<BoundLibrary<StringApi>> { throw std::runtime_error("broken table"); });
  const Expected<const StringApi*> api = library.api();
  EXPECT_FALSE(api.has_value());
  const std::string error = api ? std::string() : api.failure().message;
  EXPECT_EQ(error, "cannot load Test: broken table");
}

}  // namespace
}  // namespace hipacm::backend
