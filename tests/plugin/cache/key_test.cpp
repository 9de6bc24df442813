// SPDX-License-Identifier: MIT
// key_test.cpp - every field that determines a code object changes the cache key.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>

#include "plugin/cache/key/key.h"
#include "plugin/cache/store/schema.h"

namespace hipacm::cache {
namespace {

backend::CompileRequest base_request() {
  return {.source = "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n",
          .source_name = "k.hip",
          .options = {"-O3", "-DN=4"},
          .headers = {{"a.h", "#define A 1\n"}},
          .name_expressions = {"k"},
          .arch = "gfx90a",
          .environment = {}};
}

const backend::CompilerIdentity kCompiler{"hiprtc", "5.2 libamdhip64.so.5.2.50203", ""};

std::string key_of(const backend::CompileRequest& r) { return cache_key(r, kCompiler); }

// Whether `edit` of the base request changes its key.
bool edit_changes_key(const std::function<void(backend::CompileRequest&)>& edit) {
  auto r = base_request();
  edit(r);
  return key_of(r) != key_of(base_request());
}

TEST(CacheKey, IsStableAndHex) {
  const std::string key = key_of(base_request());
  EXPECT_EQ(key, key_of(base_request()));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(CacheKey, SourceChangesKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.source += " "; }));
}

TEST(CacheKey, SourceNameChangesKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.source_name = "other.hip"; }));
}

TEST(CacheKey, HeaderNameChangesKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.headers[0].first = "b.h"; }));
}

TEST(CacheKey, HeaderContentsChangeKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.headers[0].second = "#define A 2\n"; }));
}

TEST(CacheKey, HeaderBoundaryChangesKey) {
  auto a = base_request();
  a.headers = {{"a.h", "xy"}};
  auto b = base_request();
  b.headers = {{"a.hx", "y"}};
  EXPECT_NE(key_of(a), key_of(b));
}

TEST(CacheKey, NameExpressionsChangeKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.name_expressions.push_back("&k"); }));
}

TEST(CacheKey, OptionsChangeKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.options[1] = "-DN=8"; }));
  EXPECT_TRUE(edit_changes_key([](auto& r) { std::swap(r.options[0], r.options[1]); }))
      << "reordered";
}

// The compiler gets the options raw, so the key must too: a padded or empty
// option can make a compile fail that the clean list would not.
TEST(Trust05_OptionsKey, WhitespaceAndEmptyOptionsChangeTheKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) {
    r.options = {" -O3\t", "", "-DN=4", "   "};
  })) << "padded";
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.options.push_back(""); })) << "empty added";
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.options[0] = " " + r.options[0]; }))
      << "leading space";
}

TEST(CacheKey, ArchChangesKey) {
  EXPECT_TRUE(edit_changes_key([](auto& r) { r.arch = "gfx1030"; }));
}

TEST(CacheKey, ArchFeatureFlagsChangeKey) {
  auto plus = base_request();
  plus.arch = "gfx90a:xnack+";
  auto minus = base_request();
  minus.arch = "gfx90a:xnack-";
  EXPECT_NE(key_of(plus), key_of(minus));
  EXPECT_NE(key_of(minus), key_of(base_request()));
}

TEST(CacheKey, BackendNameChangesKey) {
  EXPECT_NE(cache_key(base_request(), {"nvrtc", kCompiler.version, ""}), key_of(base_request()));
}

TEST(CacheKey, CompilerVersionChangesKey) {
  EXPECT_NE(cache_key(base_request(), {"hiprtc", "5.2 libamdhip64.so.5.2.50204", ""}),
            key_of(base_request()));
}

TEST(CacheKey, SchemaVersionChangesKey) {
  EXPECT_EQ(cache_key(base_request(), kCompiler, kSchemaVersion), key_of(base_request()));
  EXPECT_NE(cache_key(base_request(), kCompiler, kSchemaVersion + 1), key_of(base_request()));
}

}  // namespace
}  // namespace hipacm::cache
