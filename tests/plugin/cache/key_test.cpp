// key_test.cpp - every field that determines a code object changes the cache key.
#include <gtest/gtest.h>

#include "plugin/cache/key/key.h"
#include "plugin/cache/store/schema.h"

namespace hipacm::cache {
namespace {

backend::CompileRequest base_request() {
  backend::CompileRequest r;
  r.source = "extern \"C\" __global__ void k(int* p) { p[0] = 1; }\n";
  r.source_name = "k.hip";
  r.options = {"-O3", "-DN=4"};
  r.headers = {{"a.h", "#define A 1\n"}};
  r.name_expressions = {"k"};
  r.arch = "gfx90a";
  return r;
}

const backend::CompilerIdentity kCompiler{"hiprtc", "5.2 libamdhip64.so.5.2.50203", ""};

std::string key_of(const backend::CompileRequest& r) { return cache_key(r, kCompiler); }

TEST(CacheKey, IsStableAndHex) {
  const std::string key = key_of(base_request());
  EXPECT_EQ(key, key_of(base_request()));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(CacheKey, SourceChangesKey) {
  auto r = base_request();
  r.source += " ";
  EXPECT_NE(key_of(r), key_of(base_request()));
}

TEST(CacheKey, SourceNameChangesKey) {
  auto r = base_request();
  r.source_name = "other.hip";
  EXPECT_NE(key_of(r), key_of(base_request()));
}

TEST(CacheKey, HeaderNameChangesKey) {
  auto r = base_request();
  r.headers[0].first = "b.h";
  EXPECT_NE(key_of(r), key_of(base_request()));
}

TEST(CacheKey, HeaderContentsChangeKey) {
  auto r = base_request();
  r.headers[0].second = "#define A 2\n";
  EXPECT_NE(key_of(r), key_of(base_request()));
}

TEST(CacheKey, HeaderBoundaryChangesKey) {
  auto a = base_request();
  a.headers = {{"a.h", "xy"}};
  auto b = base_request();
  b.headers = {{"a.hx", "y"}};
  EXPECT_NE(key_of(a), key_of(b));
}

TEST(CacheKey, NameExpressionsChangeKey) {
  auto r = base_request();
  r.name_expressions.push_back("&k");
  EXPECT_NE(key_of(r), key_of(base_request()));
}

TEST(CacheKey, OptionsChangeKey) {
  auto r = base_request();
  r.options[1] = "-DN=8";
  EXPECT_NE(key_of(r), key_of(base_request()));
  auto reordered = base_request();
  std::swap(reordered.options[0], reordered.options[1]);
  EXPECT_NE(key_of(reordered), key_of(base_request()));
}

// The compiler gets the options raw, so the key must too: a padded or empty
// option can make a compile fail that the clean list would not.
TEST(Trust05_OptionsKey, WhitespaceAndEmptyOptionsChangeTheKey) {
  auto padded = base_request();
  padded.options = {" -O3\t", "", "-DN=4", "   "};
  EXPECT_NE(key_of(padded), key_of(base_request()));
  auto empty_added = base_request();
  empty_added.options.push_back("");
  EXPECT_NE(key_of(empty_added), key_of(base_request()));
  auto leading_space = base_request();
  leading_space.options[0] = " " + leading_space.options[0];
  EXPECT_NE(key_of(leading_space), key_of(base_request()));
}

TEST(CacheKey, ArchChangesKey) {
  auto r = base_request();
  r.arch = "gfx1030";
  EXPECT_NE(key_of(r), key_of(base_request()));
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
